package io.rdmaflux.coroutines

import io.kotest.core.listeners.AfterEachListener
import io.kotest.core.listeners.BeforeEachListener
import io.kotest.core.test.TestCase
import io.kotest.engine.test.TestResult
import io.rdmaflux.core.RdmaLeakReporter
import io.rdmaflux.core.testing.LeakRecorder

/**
 * The Kotest counterpart of reactive-core's `RdmaLeakCheckExtension` (JUnit extensions do not reach
 * Kotest specs): around every test it installs a [LeakRecorder] as the [RdmaLeakReporter], and fails
 * the test when a node closed while the application still held received messages. Soft-provider
 * resources and threads are checked by each spec's own `VerbsLeakCheck`.
 *
 * Specs run one at a time (Kotest's default), so one recorder at a time is installed.
 */
object RdmaLeakListener : BeforeEachListener, AfterEachListener {
    private var recorder: LeakRecorder? = null
    private var previous: RdmaLeakReporter? = null

    override suspend fun beforeEach(testCase: TestCase) {
        val r = LeakRecorder()
        previous = RdmaLeakReporter.install(r)
        recorder = r
    }

    override suspend fun afterEach(testCase: TestCase, result: TestResult) {
        val r = recorder ?: return
        recorder = null
        previous?.let { RdmaLeakReporter.install(it) }
        previous = null
        val leaks = r.drain()
        if (leaks.isNotEmpty()) {
            throw AssertionError("${testCase.name.name}: nodes closed while the application held received messages: $leaks")
        }
    }
}
