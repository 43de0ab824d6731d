package io.rdmaflux.coroutines

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import io.rdmaflux.core.RdmaLeakReporter
import io.rdmaflux.core.RdmaMessage
import io.rdmaflux.core.testing.LeakRecorder
import reactor.core.publisher.Flux

class LeakListenerSpec : FunSpec({
    test("every spec's tests run with a leak recorder installed by the project configuration") {
        check(RdmaLeakReporter.installed() is LeakRecorder) { "installed: ${RdmaLeakReporter.installed()}" }
    }

    test("a message held when its node closes fails the test, naming the connection and the message") {
        val held = mutableListOf<RdmaMessage>()
        val pair = InvokerPair()
        try {
            val (client, server) = pair.connect()
            server.receive().subscribe { held.add(it) }
            client.send(Flux.just(RdmaMessage.of("kept"))).subscribe()
            pair.drive()
            check(held.size == 1) { "received ${held.size}" }
        } finally {
            pair.close()
        }
        // what the project-level listener does after this test, called here so that the failure is observed
        val failure = shouldThrow<AssertionError> { RdmaLeakListener.afterEach(this.testCase, io.kotest.engine.test.TestResult.Success(kotlin.time.Duration.ZERO)) }
        failure.message shouldContain "1 received message was not released"
        failure.message shouldContain "server/"
        failure.message shouldContain "psn=0, 4 bytes"
    }
})
