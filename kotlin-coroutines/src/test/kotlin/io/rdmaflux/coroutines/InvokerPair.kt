package io.rdmaflux.coroutines

import io.rdmaflux.core.ConnectionSpec
import io.rdmaflux.core.RdmaConnection
import io.rdmaflux.core.RdmaNode
import io.rdmaflux.core.RdmaServer
import io.rdmaflux.verbs.PortAddress
import io.rdmaflux.verbs.ThreadingMode
import io.rdmaflux.verbs.soft.RailConfig
import io.rdmaflux.verbs.testing.SoftTwoNodes
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelChildren
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield

/**
 * Two INVOKER-mode nodes on a private in-JVM soft fabric with one virtual clock: no threads, no
 * sleeps. [run] executes a coroutine on a single-threaded event loop and, between its steps,
 * drives both providers and nodes, advancing virtual time 1 µs per idle pass — so every coroutine
 * resumption and every Reactor signal happens on the test thread in a reproducible order.
 */
class InvokerPair(
    ports: Int = 1,
    rail: RailConfig = RailConfig.UNSHAPED,
    configure: RdmaNode.Builder.() -> Unit = {},
) : AutoCloseable {
    val soft: SoftTwoNodes = SoftTwoNodes.create(ports, rail)
    val clientNode: RdmaNode = node("client", soft.a(), ports, configure)
    val serverNode: RdmaNode = node("server", soft.b(), ports, configure)
    val server: RdmaServer = serverNode.bind(PortAddress("mem", soft.b().devices()[0].name(), 0))

    private fun node(name: String, provider: io.rdmaflux.verbs.soft.SoftProvider, ports: Int, configure: RdmaNode.Builder.() -> Unit) =
        rdmaNode {
            provider(provider)
            name(name)
            ports(*IntArray(ports) { it + 1 })
            threadingMode(ThreadingMode.INVOKER)
            clock(soft.clock())
            driveProvider(false)
            configure()
        }

    /** One pass: both providers, then both nodes; returns the work done. */
    fun pass(): Int = soft.progress() + clientNode.invoke() + serverNode.invoke()

    /** Runs [block] to completion while driving the pair; fails after [maxPasses] passes. */
    fun <T> run(maxPasses: Int = 2_000_000, block: suspend CoroutineScope.() -> T): T = runBlocking {
        val job = async { block() }
        var passes = 0
        while (!job.isCompleted) {
            if (++passes > maxPasses) {
                job.cancel()
                coroutineContext.cancelChildren()
                throw AssertionError("not done after $maxPasses passes (virtual time ${soft.clock().nanoTime()} ns)")
            }
            if (pass() == 0) {
                soft.clock().advance(1_000)
            }
            yield()
        }
        job.await()
    }

    /** Connects client to server with [spec]; returns (client side, server side). */
    fun connect(spec: ConnectionSpec = ConnectionSpec.defaults()): Pair<RdmaConnection, RdmaConnection> = run {
        val accepted = async { server.acceptAsFlow().first() }
        val client = clientNode.connectAwait(server.address(), spec)
        client to accepted.await()
    }

    /** Drives until three consecutive passes do no work. */
    fun drive() {
        var idle = 0
        var i = 0
        while (i++ < 1_000_000 && idle < 3) {
            if (pass() == 0) {
                idle++
                soft.clock().advance(1_000)
            } else {
                idle = 0
            }
        }
    }

    override fun close() {
        try {
            server.close()
            drive()
        } finally {
            clientNode.close()
            serverNode.close()
            soft.close()
        }
    }
}
