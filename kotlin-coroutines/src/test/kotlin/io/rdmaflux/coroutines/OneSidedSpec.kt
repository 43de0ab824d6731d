package io.rdmaflux.coroutines

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.rdmaflux.core.ConnectionSpec
import io.rdmaflux.core.onesided.RemoteAccess
import io.rdmaflux.core.onesided.RemoteAccessException
import io.rdmaflux.verbs.testing.VerbsLeakCheck
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.first
import java.nio.ByteBuffer

class OneSidedSpec : FunSpec({
    lateinit var leaks: VerbsLeakCheck
    beforeTest { leaks = VerbsLeakCheck.begin() }
    afterTest { leaks.assertClean() }

    fun bytes(n: Int, seed: Int) = ByteArray(n) { (it * 31 + seed).toByte() }

    test("putAwait, fenceAwait and getAwait move the bytes over two rails and the target sees the epoch") {
        InvokerPair(ports = 2).use { p ->
            val (client, server) = p.connect(ConnectionSpec.rails(2))
            val target = p.serverNode.registerMemory(ByteBuffer.allocateDirect(1 shl 18))
            val source = p.clientNode.registerMemory(ByteBuffer.allocateDirect(1 shl 18))
            val back = p.clientNode.registerMemory(ByteBuffer.allocateDirect(1 shl 18))
            val data = bytes(1 shl 18, 5)
            source.buffer().put(data)
            val (epoch, seen) = p.run {
                val announced = async { server.epochsAsFlow().first() }
                val owner = server.exposeAwait(target, RemoteAccess.READ_WRITE)
                owner.isOwner shouldBe true
                val remote = client.remoteRegionsAsFlow().first()
                client.putAwait(source, 0, remote, 0, data.size)
                val e = client.fenceAwait()
                client.getAwait(back, 0, remote, 0, data.size)
                e to announced.await()
            }
            epoch.puts() shouldBe 1
            epoch.bytesPut() shouldBe data.size.toLong()
            epoch.railMask() shouldBe 0b11L
            seen shouldBe epoch
            ByteArray(data.size).also { target.buffer().get(it) } shouldBe data
            ByteArray(data.size).also { back.buffer().get(it) } shouldBe data
            client.close()
            server.close()
            p.drive()
        }
    }

    test("putAwait to a read-only exposure throws RemoteAccessException and writes nothing") {
        InvokerPair().use { p ->
            val (client, server) = p.connect()
            val target = p.serverNode.registerMemory(ByteBuffer.allocateDirect(4096))
            val source = p.clientNode.registerMemory(ByteBuffer.allocateDirect(4096))
            source.buffer().put(bytes(4096, 1))
            val e = p.run {
                server.exposeAwait(target, RemoteAccess.READ)
                val remote = client.remoteRegionsAsFlow().first()
                shouldThrow<RemoteAccessException> { client.putAwait(source, 0, remote, 0, 4096) }
            }
            e.reason() shouldBe RemoteAccessException.Reason.RIGHTS
            e.message shouldContain "READ only"
            ByteArray(4096).also { target.buffer().get(it) } shouldBe ByteArray(4096)
            client.close()
            server.close()
            p.drive()
        }
    }

    test("fetchAndAddAwait and compareAndSwapAwait return the old value; a misaligned word throws ALIGNMENT") {
        InvokerPair().use { p ->
            val (client, server) = p.connect()
            val target = p.serverNode.registerMemory(ByteBuffer.allocateDirect(64))
            val (olds, misaligned) = p.run {
                server.exposeAwait(target, RemoteAccess.ATOMIC)
                val remote = client.remoteRegionsAsFlow().first()
                val a = client.fetchAndAddAwait(remote, 8, 5)
                val b = client.fetchAndAddAwait(remote, 8, 5)
                val c = client.compareAndSwapAwait(remote, 8, 10, 42)
                val d = client.compareAndSwapAwait(remote, 8, 10, 7)
                listOf(a, b, c, d) to shouldThrow<RemoteAccessException> { client.fetchAndAddAwait(remote, 12, 1) }
            }
            olds shouldBe listOf(0L, 5L, 10L, 42L)
            target.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(8) shouldBe 42L
            misaligned.reason() shouldBe RemoteAccessException.Reason.ALIGNMENT
            misaligned.message shouldContain "12"
            client.close()
            server.close()
            p.drive()
        }
    }
})
