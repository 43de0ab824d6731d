package io.rdmaflux.coroutines

import io.kotest.common.ExperimentalKotest
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.property.Arb
import io.kotest.property.PropTestConfig
import io.kotest.property.arbitrary.int
import io.kotest.property.arbitrary.list
import io.kotest.property.checkAll
import io.rdmaflux.core.ConnectionSpec
import io.rdmaflux.core.RdmaMessage
import io.rdmaflux.verbs.testing.VerbsLeakCheck
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import java.nio.ByteBuffer

/**
 * Properties of send(Flow) / receiveAsFlow over one or two rails, for any message sizes (up to
 * several fragments), prefetch and receive-buffer count: every message arrives once, in order,
 * byte for byte; and whenever the collector stops early, every receive buffer goes back. Seeded,
 * so a failure reproduces.
 */
@OptIn(ExperimentalKotest::class)
class DeliveryPropertySpec : FunSpec({
    val config = PropTestConfig(seed = 20_261_122L, iterations = 40)

    fun payload(index: Int, size: Int): ByteArray =
        ByteArray(size) { (index * 7 + it).toByte() }.also { if (size >= 4) ByteBuffer.wrap(it).putInt(0, index) }

    test("any sizes, prefetch, buffers and rails: exactly once, in order, intact, nothing held") {
        checkAll(config, Arb.list(Arb.int(0..6_000), 0..40), Arb.int(1..80), Arb.int(2..16), Arb.int(1..2)) { sizes, prefetch, buffers, rails ->
            val leaks = VerbsLeakCheck.begin()
            InvokerPair(ports = 2) { receiveBuffers(buffers).creditThreshold(1).bufferBytes(2048) }.use { p ->
                val (client, server) = p.connect(ConnectionSpec.rails(rails))
                val got = p.run {
                    val received = async { server.receiveAsFlow(prefetch).map { it.toByteArrayAndRelease() }.toList() }
                    client.send(sizes.withIndex().asFlow().map { (i, n) -> RdmaMessage.of(payload(i, n)) })
                    client.closeAwait()
                    received.await()
                }
                got.size shouldBe sizes.size
                got.forEachIndexed { i, bytes -> bytes.contentEquals(payload(i, sizes[i])) shouldBe true }
                p.serverNode.metrics().buffersOutstanding() shouldBe 0
            }
            leaks.assertClean()
        }
    }

    test("a collector that stops after any k messages leaves no receive buffer held") {
        checkAll(config, Arb.int(0..60), Arb.int(1..32), Arb.int(2..16)) { k, prefetch, buffers ->
            val leaks = VerbsLeakCheck.begin()
            InvokerPair { receiveBuffers(buffers).creditThreshold(1) }.use { p ->
                val (client, server) = p.connect()
                val got = p.run {
                    val sending = launch { runCatching { client.send((0 until 60).asFlow().map { RdmaMessage.of(ByteArray(100)) }) } }
                    val taken = server.receiveAsFlow(prefetch).take(k).map { it.use { m -> m.lengthBytes() } }.toList()
                    client.abort()
                    sending.join()
                    taken
                }
                got shouldContainExactly List(k) { 100 }
                p.drive()
                p.serverNode.metrics().buffersOutstanding() shouldBe 0
            }
            leaks.assertClean()
        }
    }
})
