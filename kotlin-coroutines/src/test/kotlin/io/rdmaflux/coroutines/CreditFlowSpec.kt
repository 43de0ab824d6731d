package io.rdmaflux.coroutines

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.shouldBe
import io.rdmaflux.core.RdmaConnection
import io.rdmaflux.core.RdmaMessage
import io.rdmaflux.verbs.soft.RailConfig
import io.rdmaflux.verbs.testing.VerbsLeakCheck
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.launch
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield

/**
 * A collecting Flow must keep credits flowing: while the collector works through the messages it
 * has, demand (and so credit) for the next ones must already be on its way to the sender.
 *
 * Measured in virtual time on a rail with 20 µs one-way latency, a consumer taking 1 µs per
 * message, 64 receive buffers: the largest gap between two consecutive messages reaching the
 * collector, and the number of gaps longer than 5 µs ("credit stalls": the consumer waited for a
 * credit round trip). `receive().asFlow()` re-requests only after its 64-slot buffer drained and
 * stalls once per batch; [receiveAsFlow] tops demand up every `prefetch / 4` and never stalls after
 * the first round trip.
 */
class CreditFlowSpec : FunSpec({
    lateinit var leaks: VerbsLeakCheck
    beforeTest { leaks = VerbsLeakCheck.begin() }
    afterTest { leaks.assertClean() }

    val messages = 2_000
    val latency = RailConfig.builder().latencyNs(20_000).build()

    data class Gaps(val maxGapNs: Long, val stalls: Int)

    fun measure(collect: (RdmaConnection) -> Flow<RdmaMessage>): Gaps =
        InvokerPair(rail = latency) { receiveBuffers(64).creditThreshold(8) }.use { p ->
            val (client, server) = p.connect()
            val clock = p.soft.clock()
            val arrivals = LongArray(messages)
            runBlocking {
                val consumer = launch {
                    var i = 0
                    collect(server).take(messages).collect { m ->
                        m.close()
                        arrivals[i++] = clock.nanoTime()
                        yield() // one message per 1 µs step of the loop below
                    }
                }
                val producer = launch { client.send((0 until messages).asFlow().map { RdmaMessage.of(ByteArray(32)) }) }
                var steps = 0
                while (!consumer.isCompleted || !producer.isCompleted) {
                    check(++steps < 1_000_000) { "no progress at ${clock.nanoTime()} ns" }
                    var k = 0
                    while (p.pass() != 0 && ++k < 100) { /* settle this instant */ }
                    yield()
                    clock.advance(1_000)
                }
            }
            p.drive()
            p.serverNode.metrics().buffersOutstanding() shouldBe 0
            // the first message waits for the first credit round trip by design; gaps after it count
            val gaps = (1 until messages).map { arrivals[it] - arrivals[it - 1] }
            Gaps(gaps.max(), gaps.count { it > 5_000 })
        }

    test("receiveAsFlow keeps credits flowing: no credit stall while the collector drains a batch") {
        val ours = measure { it.receiveAsFlow(prefetch = 64) }
        println("receiveAsFlow(prefetch = 64): max gap ${ours.maxGapNs} ns, credit stalls ${ours.stalls} over $messages messages")
        ours.stalls shouldBe 0
        ours.maxGapNs shouldBeLessThanOrEqualTo 2_000L
    }

    test("the measurement tells a batch-of-64 consumer apart: receive().asFlow() stalls once per batch") {
        val naive = measure { it.receive().asFlow() }
        println("receive().asFlow(): max gap ${naive.maxGapNs} ns, credit stalls ${naive.stalls} over $messages messages")
        naive.maxGapNs shouldBeGreaterThan 30_000L
        naive.stalls shouldBeGreaterThan messages / 64 - 2
    }
})
