package io.rdmaflux.coroutines

import io.kotest.assertions.withClue
import io.kotest.common.ExperimentalKotest
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.shouldBe
import io.kotest.property.Arb
import io.kotest.property.PropTestConfig
import io.kotest.property.arbitrary.bind
import io.kotest.property.arbitrary.boolean
import io.kotest.property.arbitrary.choice
import io.kotest.property.arbitrary.constant
import io.kotest.property.arbitrary.int
import io.kotest.property.arbitrary.list
import io.kotest.property.arbitrary.long
import io.kotest.property.arbitrary.map
import io.kotest.property.checkAll
import io.rdmaflux.core.ConnectionSpec
import io.rdmaflux.core.RdmaMessage
import io.rdmaflux.verbs.testing.VerbsLeakCheck
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.launch
import kotlinx.coroutines.yield
import org.reactivestreams.Subscriber
import org.reactivestreams.Subscription
import kotlin.random.Random

/**
 * Delivery under any application behaviour (issue 4), over the soft fabric in INVOKER mode and
 * virtual time: for any message sizes (up to several receive buffers, by rendezvous or as DATA
 * fragments), any demand schedule (`request(k)` chunks and pauses), any release order (messages
 * held and released later in any permutation, some released inside `onNext`, some only after the
 * connection closed) and one to three rails:
 *
 * - every message is delivered exactly once, in PSN order, byte for byte, and stays intact while held;
 * - no more messages are delivered than requested; the sender takes from its publisher at most its
 *   credits plus its send queue, and so at most the demand plus the send queue (a message whose
 *   first fragment or RTS arrived counts against the demand while it is in progress);
 * - at the end both nodes hold no buffer, every connection is freed and no soft resource or thread leaks.
 *
 * The schedule is generated data (cycled until every message arrived) and the seeds are fixed, so a
 * failure reproduces, and Kotest shrinks it to a short schedule.
 */
@OptIn(ExperimentalKotest::class)
class DemandAndReleaseOrderPropertySpec : FunSpec({
    test("any demand, release order, sizes and rails: each message once, in PSN order, intact; sender within credits plus queue; pools back to full") {
        checkAll(PropTestConfig(seed = 20_260_404L, iterations = 120), schedules) { s ->
            val leaks = VerbsLeakCheck.begin()
            s.pair().use { p ->
                val (client, server) = p.connect(ConnectionSpec.rails(s.rails))
                val receiver = ScheduledReceiver(s)
                var taken = 0
                p.run {
                    val sending = async { client.send(flow { s.sizes.indices.forEach { i -> taken++; emit(RdmaMessage.of(payload(i, s.sizes[i]))) } }) }
                    server.receive().subscribe(receiver)
                    receiver.runSteps(s.steps, receiver::allArrived) {
                        withClue("messages taken from the send publisher vs demand + send queue") {
                            taken.toLong() shouldBeLessThanOrEqualTo receiver.requested + s.sendQueue
                        }
                        withClue("receive buffers out vs the receive buffers of all rails + messages held") {
                            p.serverNode.metrics().buffersOutstanding() shouldBeLessThanOrEqualTo s.rails * s.receiveBuffers + receiver.held.size
                        }
                    }
                    if (!s.closeWhileHolding) receiver.releaseAll(Random(s.steps.size))
                    sending.await()
                    client.closeAwait()
                    receiver.awaitCompletion()
                    receiver.releaseAll(Random(s.sizes.size))
                }
                p.drive()
                receiver.failures.shouldBeEmpty()
                receiver.released.count { it } shouldBe s.sizes.size
                client.metrics().maxOutstandingRequest() shouldBeLessThanOrEqualTo (s.rails * s.receiveBuffers + s.sendQueue).toLong()
                client.metrics().messagesDelivered() shouldBe s.sizes.size.toLong()
                server.metrics().messagesReceived() shouldBe s.sizes.size.toLong()
                p.assertBackToFull()
            }
            leaks.assertClean()
        }
    }

    test("receiveAsFlow with a collector holding messages and a releaser freeing them in any order: each once, in order, intact; pools back to full") {
        checkAll(PropTestConfig(seed = 20_260_405L, iterations = 60), schedules, Arb.int(1..16)) { s, prefetch ->
            val leaks = VerbsLeakCheck.begin()
            s.pair().use { p ->
                val (client, server) = p.connect(ConnectionSpec.rails(s.rails))
                val receiver = ScheduledReceiver(s)
                p.run {
                    launch {
                        client.send(flow { s.sizes.indices.forEach { i -> emit(RdmaMessage.of(payload(i, s.sizes[i]))) } })
                        client.closeAwait()
                    }
                    val collecting = launch {
                        receiver.requested = Long.MAX_VALUE // the flow's own demand, checked by MessageFlow
                        server.receiveAsFlow(prefetch).collect { m ->
                            receiver.onNext(m)
                            // the collector's pace: a few passes of the pair per message
                            repeat(s.holds.size) { yield() }
                        }
                        receiver.onComplete()
                    }
                    // the flow makes the demand: Request steps only pause the releaser; the sender closes after sending
                    receiver.runSteps(s.steps, { collecting.isCompleted && receiver.held.isEmpty() }) { }
                }
                p.drive()
                receiver.failures.shouldBeEmpty()
                receiver.received shouldBe s.sizes.size
                receiver.released.count { it } shouldBe s.sizes.size
                client.metrics().maxOutstandingRequest() shouldBeLessThanOrEqualTo (s.rails * s.receiveBuffers + s.sendQueue).toLong()
                p.assertBackToFull()
            }
            leaks.assertClean()
        }
    }
})

/** The byte at [offset] of message [index]: differs between neighbouring messages and offsets. */
private fun byteAt(index: Int, offset: Int): Byte = (index * 31 + offset * 7 + 1).toByte()

private fun payload(index: Int, size: Int): ByteArray = ByteArray(size) { byteAt(index, it) }

/** One generated run: node sizes, the messages, and what the receiving application does. */
private data class Schedule(
    val rails: Int,
    val bufferBytes: Int,
    val receiveBuffers: Int,
    val sendQueue: Int,
    val creditThreshold: Int,
    /** 0: large messages travel as DATA fragments; otherwise by rendezvous. */
    val rendezvousBuffers: Int,
    val sizes: List<Int>,
    /** Per arriving message, cycled: hold it (true) or release it inside onNext (false). */
    val holds: List<Boolean>,
    /** The receiver's actions, cycled until the run's goal is reached. */
    val steps: List<Step>,
    /** Close the connection while messages are still held, and release them afterwards. */
    val closeWhileHolding: Boolean,
) {
    fun pair(): InvokerPair = InvokerPair(ports = rails) {
        bufferBytes(bufferBytes)
        receiveBuffers(receiveBuffers)
        sendQueue(sendQueue)
        creditThreshold(creditThreshold)
        rendezvousBuffers(rendezvousBuffers)
        maxMessageBytes(MAX_MESSAGE_BYTES)
    }
}

private sealed interface Step {
    data class Request(val n: Int) : Step
    data class Pause(val passes: Int) : Step
    data class ReleaseOne(val pick: Int) : Step
    data class ReleaseAll(val permutationSeed: Long) : Step
}

private val steps: Arb<Step> = Arb.choice(
    Arb.int(1..6).map { Step.Request(it) },
    Arb.int(1..40).map { Step.Pause(it) },
    Arb.int(0..1_000).map { Step.ReleaseOne(it) },
    Arb.long().map { Step.ReleaseAll(it) },
)

private const val MAX_MESSAGE_BYTES = 4 * 512 + 100

private val schedules: Arb<Schedule> = Arb.bind(
    Arb.int(1..3),
    Arb.int(64..512),
    Arb.int(1..8),
    Arb.int(1..4),
    Arb.int(1..8),
    Arb.choice(Arb.constant(0), Arb.int(1..3)),
    Arb.list(Arb.choice(Arb.int(0..64), Arb.int(0..MAX_MESSAGE_BYTES)), 0..40),
    Arb.list(Arb.boolean(), 1..8),
    Arb.list(steps, 1..24),
    Arb.boolean(),
) { rails, bufferBytes, receiveBuffers, sendQueue, threshold, rendezvousBuffers, sizes, holds, steps, closeWhileHolding ->
    Schedule(rails, bufferBytes, receiveBuffers, sendQueue, minOf(threshold, receiveBuffers), rendezvousBuffers, sizes, holds, steps, closeWhileHolding)
}

/**
 * The receiving application: checks each message on arrival and on release, holds or releases it
 * per the schedule, and records violations instead of throwing (signals never throw).
 */
private class ScheduledReceiver(private val s: Schedule) : Subscriber<RdmaMessage> {
    private lateinit var subscription: Subscription
    val held = ArrayList<RdmaMessage>()
    val released = BooleanArray(s.sizes.size)
    val failures = ArrayList<String>()
    var requested = 0L
    var received = 0
    var completed = false

    /** Changes whenever a message arrives or is released: a cycle of steps without it made no progress. */
    private val progress get() = received + released.count { it }

    fun allArrived(): Boolean = received == s.sizes.size

    override fun onSubscribe(subscription: Subscription) {
        this.subscription = subscription
    }

    override fun onNext(m: RdmaMessage) {
        if (received.toLong() >= requested) failures += "PSN ${m.psn()} delivered beyond the $requested messages requested"
        if (m.psn() != received) failures += "PSN ${m.psn()} delivered when PSN $received was next"
        mismatch(m)?.let { failures += "on arrival: $it" }
        received++
        if (s.holds[m.psn().mod(s.holds.size)]) held += m else release(m)
    }

    override fun onError(t: Throwable) {
        failures += "receive failed: $t"
    }

    override fun onComplete() {
        completed = true
    }

    fun request(n: Int) {
        requested += n
        subscription.request(n.toLong())
    }

    fun release(m: RdmaMessage) {
        mismatch(m)?.let { failures += "while held: $it" }
        val psn = m.psn()
        if (psn in released.indices) {
            if (released[psn]) failures += "PSN $psn released twice"
            released[psn] = true
        }
        if (!m.release()) failures += "PSN $psn was not freed by its one release"
    }

    fun releaseAll(random: Random) {
        val order = held.shuffled(random)
        held.clear()
        order.forEach(::release)
    }

    /**
     * Runs [steps] cyclically until [done], yielding to the pair after each step and calling
     * [invariants]; a whole cycle without progress adds one request and releases the oldest held
     * message, so every schedule terminates.
     */
    suspend fun runSteps(steps: List<Step>, done: () -> Boolean, invariants: () -> Unit) {
        var step = 0
        var progressAtCycleStart = progress
        while (!done()) {
            check(step < 200_000) { "no progress after $step steps: received $received, held ${held.size}, failures $failures" }
            when (val op = steps[step % steps.size]) {
                is Step.Request -> if (::subscription.isInitialized) request(op.n) else yield()
                is Step.Pause -> repeat(op.passes) { yield() }
                is Step.ReleaseOne -> if (held.isNotEmpty()) release(held.removeAt(op.pick % held.size))
                is Step.ReleaseAll -> releaseAll(Random(op.permutationSeed))
            }
            yield()
            failures.shouldBeEmpty()
            invariants()
            if (++step % steps.size == 0) {
                if (progress == progressAtCycleStart) {
                    if (::subscription.isInitialized && !allArrived()) request(1)
                    if (held.isNotEmpty()) release(held.removeAt(0))
                }
                progressAtCycleStart = progress
            }
        }
    }

    /** Yields to the pair until the peer's close completed the receive; held messages stay held. */
    suspend fun awaitCompletion() {
        var passes = 0
        while (!completed) {
            check(++passes < 200_000) { "receive not completed after the peer closed: received $received, held ${held.size}" }
            yield()
        }
    }

    private fun mismatch(m: RdmaMessage): String? {
        val psn = m.psn()
        if (psn !in s.sizes.indices) return "PSN $psn but only ${s.sizes.size} messages were sent"
        if (m.lengthBytes() != s.sizes[psn]) return "PSN $psn has ${m.lengthBytes()} bytes, ${s.sizes[psn]} were sent"
        val bytes = m.toByteArray()
        val k = bytes.indices.firstOrNull { bytes[it] != byteAt(psn, it) } ?: return null
        return "PSN $psn byte $k is ${bytes[k]}, ${byteAt(psn, k)} was sent"
    }
}

/** Both nodes hold no buffer and freed every connection. */
private fun InvokerPair.assertBackToFull() {
    for (node in listOf(clientNode, serverNode)) {
        withClue("${node.metrics()} of $node") {
            node.metrics().buffersOutstanding() shouldBe 0
            node.metrics().connections() shouldBe 0
        }
    }
}
