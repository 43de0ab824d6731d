package io.rdmaflux.coroutines

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.rdmaflux.core.IllegalReferenceCountException
import io.rdmaflux.core.RdmaMessage
import io.rdmaflux.core.channel.ChannelFactory
import io.rdmaflux.verbs.testing.VerbsLeakCheck
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.agrona.concurrent.UnsafeBuffer
import reactor.core.publisher.Flux
import org.reactivestreams.Publisher
import org.reactivestreams.Subscription
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

class SpecsAndMessagesSpec : FunSpec({
    lateinit var leaks: VerbsLeakCheck
    beforeTest { leaks = VerbsLeakCheck.begin() }
    afterTest { leaks.assertClean() }

    test("connectionSpec builds rails, striping and timeout") {
        val factory = ChannelFactory.roundRobin()
        val spec = connectionSpec {
            rails = 2
            striping = factory
            connectTimeout = 250.milliseconds
        }
        spec.rails() shouldBe 2
        spec.channelFactory() shouldBe factory
        spec.connectTimeoutNs() shouldBe 250_000_000L
    }

    test("connectionSpec defaults match ConnectionSpec.defaults") {
        val spec = connectionSpec { }
        spec.rails() shouldBe 1
        spec.connectTimeoutNs() shouldBe io.rdmaflux.core.ConnectionSpec.defaults().connectTimeoutNs()
    }

    test("connectionSpec rejects bad values naming them") {
        shouldThrow<IllegalArgumentException> { connectionSpec { rails = 0 } }.message shouldContain "rails in [1, 255] required but it was 0"
        shouldThrow<IllegalArgumentException> { connectionSpec { connectTimeout = (-1).seconds } }.message shouldContain "connectTimeout"
    }

    test("rdmaNode without a provider fails naming the fix") {
        shouldThrow<NullPointerException> { rdmaNode { ports(1) } }.message shouldContain "provider"
    }

    test("use releases a message exactly once, also when the block throws") {
        val m = "hello".toRdmaMessage()
        shouldThrow<IllegalStateException> { m.use { error("boom") } }
        m.refCnt() shouldBe 0
        shouldThrow<IllegalReferenceCountException> { m.release() }
    }

    test("consume reads the content and releases") {
        val m = byteArrayOf(1, 2, 3).asRdmaMessage()
        m.consume { it.getByte(2) } shouldBe 3.toByte()
        m.refCnt() shouldBe 0
    }

    test("rdmaMessage fills bytes with the writer") {
        val m = rdmaMessage(4) { buffer, offset, length -> for (i in 0 until length) buffer.putByte(offset + i, (i + 10).toByte()) }
        val out = UnsafeBuffer(ByteArray(4))
        m.writeTo(out, 0)
        out.byteArray().toList() shouldBe listOf<Byte>(10, 11, 12, 13)
        m.release()
    }

    test("bytesMessage fills the slot through a Chronicle view and consumeBytes reads it back") {
        val m = bytesMessage(12) { writeLong(7L); writeInt(-3) }
        val out = UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(16))
        m.writeTo(out, 2)
        out.getLong(2) shouldBe 7L
        out.getInt(10) shouldBe -3
        m.consumeBytes { b -> b.readLong() to b.readInt() } shouldBe (7L to -3)
        m.refCnt() shouldBe 0
        shouldThrow<IllegalStateException> { bytesMessage(8) { writeInt(1) }.use { it.writeTo(out, 0) } }.message shouldContain "wrote 4 bytes of a 8-byte message"
    }

    test("toByteArrays copies and releases each message") {
        val messages = listOf("a".toRdmaMessage(), "bc".toRdmaMessage())
        val arrays = runBlocking { flowOf(*messages.toTypedArray()).toByteArrays().toList() }
        arrays.map { String(it) } shouldBe listOf("a", "bc")
        messages.map { it.refCnt() } shouldBe listOf(0, 0)
    }

    test("a receive publisher that ignores demand errors the flow and every message is released") {
        val messages = List(10) { "m$it".toRdmaMessage() }
        // a raw publisher: ignores demand and keeps signalling after cancel (Reactor's own would drop those itself)
        val rogue = Publisher<RdmaMessage> { s ->
            s.onSubscribe(object : Subscription {
                override fun request(n: Long) {}
                override fun cancel() {}
            })
            messages.forEach(s::onNext)
        }
        val e = shouldThrow<IllegalStateException> {
            runBlocking { MessageFlow(rogue, prefetch = 2).collect { m -> m.close() } }
        }
        e.message shouldContain "more than the 2 messages requested"
        messages.map { it.refCnt() } shouldBe List(10) { 0 }
    }

    test("receiveAsFlow rejects a prefetch out of range naming it") {
        shouldThrow<IllegalArgumentException> { MessageFlow(Flux.empty(), prefetch = 0) }.message shouldContain "it was 0"
    }

    test("rdmaMessage rejects a negative length") {
        shouldThrow<IllegalArgumentException> { rdmaMessage(-1) { _, _, _ -> } }.message shouldContain "-1"
        RdmaMessage.of(ByteArray(0)).use { it.lengthBytes() } shouldBe 0
    }
})
