package io.rdmaflux.coroutines

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.rdmaflux.core.ConnectionSpec
import io.rdmaflux.core.MessageTooLargeException
import io.rdmaflux.core.RdmaConnection
import io.rdmaflux.core.RdmaMessage
import io.rdmaflux.verbs.PortAddress
import io.rdmaflux.verbs.VerbsException
import io.rdmaflux.verbs.testing.VerbsLeakCheck
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.yield
import org.reactivestreams.Subscriber
import org.reactivestreams.Subscription
import reactor.core.publisher.Mono
import reactor.core.publisher.Sinks

class ConnectionsSpec : FunSpec({
    lateinit var leaks: VerbsLeakCheck
    beforeTest { leaks = VerbsLeakCheck.begin() }
    afterTest { leaks.assertClean() }

    test("send(Flow) and receiveAsFlow carry messages in order and release every buffer") {
        InvokerPair { receiveBuffers(8).creditThreshold(2) }.use { p ->
            val (client, server) = p.connect()
            val got = p.run {
                val received = async { server.receiveAsFlow(prefetch = 4).map { m -> m.use { it.asString() } }.toList() }
                client.send((0 until 300).asFlow().map { "message $it".toRdmaMessage() })
                client.closeAwait()
                received.await()
            }
            got shouldContainExactly (0 until 300).map { "message $it" }
            p.serverNode.metrics().buffersOutstanding() shouldBe 0
        }
    }

    test("messages larger than one buffer are fragmented and reassembled") {
        InvokerPair { bufferBytes(1024) }.use { p ->
            val (client, server) = p.connect()
            val sizes = listOf(0, 1, 999, 1000, 1001, 5000, 64 * 1024)
            val got = p.run {
                val received = async { server.receiveAsFlow().map { it.toByteArrayAndRelease() }.take(sizes.size).toList() }
                client.send(sizes.asFlow().map { n -> ByteArray(n) { (it * 31 + n).toByte() }.asRdmaMessage() })
                received.await()
            }
            got.map { it.size } shouldContainExactly sizes
            got.forEachIndexed { i, bytes -> bytes.contentEquals(ByteArray(sizes[i]) { (it * 31 + sizes[i]).toByte() }) shouldBe true }
        }
    }

    test("connectAwait to an address nobody listens on throws the connection manager's error") {
        InvokerPair().use { p ->
            val nowhere = PortAddress("mem", p.soft.b().devices()[0].name(), 65000)
            val e = shouldThrow<VerbsException> { p.run { p.clientNode.connectAwait(nowhere) } }
            e.message shouldContain "65000"
        }
    }

    test("connectAwait with more rails than ports fails with a message naming both") {
        InvokerPair(ports = 1).use { p ->
            val e = shouldThrow<IllegalArgumentException> {
                p.run { p.clientNode.connectAwait(p.server.address()) { rails = 2 } }
            }
            e.message shouldContain "2 rails"
        }
    }

    test("a connection that arrives after connectAwait was cancelled is aborted, not leaked") {
        InvokerPair().use { p ->
            val (client, _) = p.connect()
            // a publisher that signals onNext although it was cancelled: the race of a handshake
            // completing just as the coroutine is cancelled
            var late: Subscriber<in RdmaConnection>? = null
            val racing = Mono.fromDirect<RdmaConnection> { s ->
                late = s
                s.onSubscribe(object : Subscription {
                    override fun request(n: Long) {}
                    override fun cancel() {}
                })
            }
            p.run {
                val waiting = launch(start = CoroutineStart.UNDISPATCHED) { awaitConnection(racing, p.server.address()) }
                waiting.cancel()
                late!!.onNext(client)
                waiting.join()
            }
            client.isDisposed shouldBe true
        }
    }

    test("cancelling connectAwait cancels the pending connect") {
        InvokerPair().use { p ->
            val never = Sinks.one<RdmaConnection>()
            var cancelled = false
            p.run {
                val waiting = launch(start = CoroutineStart.UNDISPATCHED) {
                    awaitConnection(never.asMono().doOnCancel { cancelled = true }, p.server.address())
                }
                waiting.cancel()
                waiting.join()
            }
            cancelled shouldBe true
        }
    }

    test("cancelling the collector closes the inbound side and releases what was queued") {
        InvokerPair { receiveBuffers(16) }.use { p ->
            val (client, server) = p.connect()
            p.run {
                val sending = launch {
                    runCatching { client.send(flow { repeat(10_000) { emit(RdmaMessage.of(ByteArray(64))) } }) }
                }
                val firstFive = server.receiveAsFlow(prefetch = 16).take(5).map { it.use { m -> m.lengthBytes() } }.toList()
                firstFive shouldContainExactly List(5) { 64 }
                client.abort()
                sending.join()
            }
            p.drive()
            p.serverNode.metrics().buffersOutstanding() shouldBe 0
            p.clientNode.metrics().buffersOutstanding() shouldBe 0
        }
    }

    test("an exception thrown by the collector cancels the receive and releases buffered messages") {
        InvokerPair { receiveBuffers(16) }.use { p ->
            val (client, server) = p.connect()
            val e = shouldThrow<IllegalStateException> {
                p.run {
                    launch { runCatching { client.send((0 until 100).asFlow().map { RdmaMessage.of(ByteArray(16)) }) } }
                    server.receiveAsFlow(prefetch = 32).collect { m ->
                        m.use { }
                        repeat(10) { yield() } // let more messages queue up behind this one
                        error("consumer failed")
                    }
                }
            }
            e.message shouldBe "consumer failed"
            client.abort()
            p.drive()
            p.serverNode.metrics().buffersOutstanding() shouldBe 0
        }
    }

    test("a failing producer flow fails send with its exception and the connection stays usable") {
        InvokerPair().use { p ->
            val (client, server) = p.connect()
            val got = p.run {
                val received = async { server.receiveAsFlow().map { m -> m.use { it.asString() } }.toList() }
                val e = shouldThrow<IllegalArgumentException> {
                    client.send(flow {
                        emit("ok".toRdmaMessage())
                        throw IllegalArgumentException("producer broke")
                    })
                }
                e.message shouldBe "producer broke"
                client.sendAwait("after".toRdmaMessage())
                client.closeAwait()
                received.await()
            }
            // "ok" is delivered if a credit carried it before the error, else released with the failed send
            (got == listOf("ok", "after") || got == listOf("after")) shouldBe true
        }
    }

    test("a message above the peer's maximum fails only its send") {
        InvokerPair { maxMessageBytes(4096) }.use { p ->
            val (client, server) = p.connect()
            shouldThrow<MessageTooLargeException> { p.run { client.sendAwait(RdmaMessage.of(ByteArray(4097))) } }
            val got = p.run {
                val received = async { server.receiveAsFlow().take(1).map { m -> m.use { it.asString() } }.toList() }
                client.sendAwait("still fine".toRdmaMessage())
                received.await()
            }
            got shouldContainExactly listOf("still fine")
        }
    }

    test("a second collection of receive fails with IllegalStateException") {
        InvokerPair().use { p ->
            val (_, server) = p.connect()
            p.run {
                val first = launch { server.receiveAsFlow().collect { it.close() } }
                yield()
                val e = shouldThrow<IllegalStateException> { server.receiveAsFlow().collect { it.close() } }
                e.message shouldContain "one subscriber"
                first.cancel()
            }
        }
    }

    test("awaitClose returns when the peer closes gracefully and receive completes") {
        InvokerPair().use { p ->
            val (client, server) = p.connect()
            val count = p.run {
                val received = async { server.receiveAsFlow().map { it.close() }.toList().size }
                client.send(List(3) { "x".toRdmaMessage() }.asFlow())
                client.closeAwait()
                server.awaitClose()
                received.await()
            }
            count shouldBe 3
            client.isDisposed shouldBe true
        }
    }

    test("useAwait closes the connection when the block throws") {
        InvokerPair().use { p ->
            val (client, _) = p.connect(ConnectionSpec.defaults())
            shouldThrow<CancellationException> {
                p.run { client.useAwait { throw CancellationException("stop") } }
            }
            client.isDisposed shouldBe true
        }
    }
})
