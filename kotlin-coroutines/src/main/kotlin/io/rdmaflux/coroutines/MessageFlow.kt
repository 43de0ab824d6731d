package io.rdmaflux.coroutines

import io.rdmaflux.core.RdmaMessage
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.ClosedReceiveChannelException
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.FlowCollector
import org.reactivestreams.Publisher
import org.reactivestreams.Subscriber
import org.reactivestreams.Subscription
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReference

/**
 * [receiveAsFlow]'s flow: a Reactive Streams subscriber that hands messages to the collecting
 * coroutine through a channel of [prefetch] slots and replenishes demand continuously, the way
 * Reactor's `limitRate(prefetch)` does (request `prefetch / 4` more each time that many were
 * consumed), so receive credits keep flowing while the collector works through what it has.
 *
 * The channel can never overflow: outstanding demand plus buffered messages never exceed
 * [prefetch]. A publisher that sends more than requested errors the flow with
 * [IllegalStateException] (Reactive Streams rule 1.1).
 *
 * Discard support: messages in the channel when collection ends are released through the
 * channel's `onUndeliveredElement`; a message arriving after the end is released on arrival.
 */
internal class MessageFlow(
    private val source: Publisher<out RdmaMessage>,
    private val prefetch: Int,
) : Flow<RdmaMessage> {
    init {
        require(prefetch in 1..(1 shl 20)) { "prefetch in [1, 1048576] required but it was $prefetch" }
    }

    override suspend fun collect(collector: FlowCollector<RdmaMessage>) {
        val subscriber = ChannelSubscriber(prefetch)
        source.subscribe(subscriber)
        try {
            while (true) {
                val message = try {
                    subscriber.channel.receive()
                } catch (_: ClosedReceiveChannelException) {
                    break
                }
                collector.emit(message)
                subscriber.consumed()
            }
        } finally {
            subscriber.dispose()
        }
    }
}

/** The subscriber side of [MessageFlow]; signals arrive on the node's progress thread. */
internal class ChannelSubscriber(private val prefetch: Int) : Subscriber<RdmaMessage> {
    private val replenish = maxOf(1, prefetch / 4)
    private val subscription = AtomicReference<Subscription?>()
    private val disposed = AtomicBoolean()

    /** Messages consumed since the last request; touched by the collecting coroutine only. */
    private var consumedSinceRequest = 0

    val channel: Channel<RdmaMessage> = Channel(prefetch) { it.release() }

    override fun onSubscribe(s: Subscription) {
        if (!subscription.compareAndSet(null, s)) {
            s.cancel()
            return
        }
        if (disposed.get()) {
            s.cancel()
        } else {
            s.request(prefetch.toLong())
        }
    }

    override fun onNext(message: RdmaMessage) {
        val result = channel.trySend(message)
        if (result.isSuccess) return
        // closed (collection ended) or full (the publisher ignored demand): the message is ours to release
        message.release()
        if (!result.isClosed) {
            subscription.get()?.cancel()
            channel.close(IllegalStateException("receive publisher emitted more than the $prefetch messages requested"))
        }
    }

    override fun onError(t: Throwable) {
        channel.close(t)
    }

    override fun onComplete() {
        channel.close()
    }

    /** The collector took one message: top demand up once [replenish] were taken. */
    fun consumed() {
        if (++consumedSinceRequest >= replenish) {
            val n = consumedSinceRequest
            consumedSinceRequest = 0
            subscription.get()?.request(n.toLong())
        }
    }

    /** Collection ended: cancel upstream and release whatever is still buffered. */
    fun dispose() {
        if (disposed.compareAndSet(false, true)) {
            subscription.get()?.cancel()
            channel.cancel()
        }
    }
}
