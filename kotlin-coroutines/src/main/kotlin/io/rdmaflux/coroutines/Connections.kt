/*
 * Suspending and Flow views of RdmaNode, RdmaServer and RdmaConnection, in the style of
 * kotlinx-coroutines-reactor: thin extensions over the Java API, no logic duplicated from it.
 */
@file:JvmName("RdmaConnections")

package io.rdmaflux.coroutines

import io.rdmaflux.core.ConnectionSpec
import io.rdmaflux.core.RdmaConnection
import io.rdmaflux.core.RdmaMessage
import io.rdmaflux.core.RdmaNode
import io.rdmaflux.core.RdmaServer
import io.rdmaflux.verbs.PortAddress
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.Job
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactor.asFlux
import kotlinx.coroutines.reactor.awaitSingleOrNull
import kotlinx.coroutines.suspendCancellableCoroutine
import org.reactivestreams.Subscription
import reactor.core.CoreSubscriber
import reactor.core.publisher.Mono
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException

/**
 * Connects to the server at [address] and suspends until the peer accepted.
 *
 * **Cancellation:** cancellable. Cancelling while the handshake is in progress cancels the connect
 * (the half-built subchannels are closed); a connection that the peer accepted after the coroutine
 * was cancelled is aborted, never leaked.
 *
 * @throws io.rdmaflux.verbs.VerbsException if the peer refused, is unreachable, rejected the
 *   handshake or did not answer within [ConnectionSpec.connectTimeoutNs]
 * @throws IllegalArgumentException if `spec.rails()` exceeds this node's ports
 * @throws IllegalStateException if this node is closed
 */
suspend fun RdmaNode.connectAwait(address: PortAddress, spec: ConnectionSpec = ConnectionSpec.defaults()): RdmaConnection =
    awaitConnection(connect(address, spec), address)

/** Awaits a connecting Mono; a connection arriving after cancellation is aborted. */
internal suspend fun awaitConnection(connecting: Mono<RdmaConnection>, address: Any): RdmaConnection =
    suspendCancellableCoroutine { cont ->
        connecting.subscribe(object : CoreSubscriber<RdmaConnection> {
            private var subscription: Subscription? = null

            override fun onSubscribe(s: Subscription) {
                subscription = s
                cont.invokeOnCancellation { s.cancel() }
                s.request(1)
            }

            override fun onNext(connection: RdmaConnection) {
                // resume() returns normally even when the continuation was cancelled meanwhile: the
                // onCancellation handler then receives the connection nobody will see, and aborts it.
                cont.resume(connection) { _, c, _ -> c.abort() }
            }

            override fun onError(t: Throwable) {
                if (cont.isActive) cont.resumeWithException(t)
            }

            override fun onComplete() {
                // a Mono signals onNext before onComplete; an empty completion cannot happen for connect
                if (cont.isActive) cont.resumeWithException(IllegalStateException("connect to $address completed without a connection"))
            }
        })
    }

/**
 * Connects with a spec built by [connectionSpec]: `node.connectAwait(address) { rails = 2; striping = adaptive }`.
 *
 * Cancellable and throws as [connectAwait].
 */
suspend fun RdmaNode.connectAwait(address: PortAddress, spec: ConnectionSpecBuilder.() -> Unit): RdmaConnection =
    connectAwait(address, connectionSpec(spec))

/**
 * The connections this server accepts, as a cold [Flow] (one collector, like [RdmaServer.accept]).
 *
 * **Cancellation:** cancelling the collector stops taking connections; connections already
 * accepted and not yet collected stay open (the server owns them until [RdmaServer.close]).
 * Collecting completes when the server is closed.
 */
fun RdmaServer.acceptAsFlow(): Flow<RdmaConnection> = accept().asFlow()

/**
 * Sends every message of [messages] in order and suspends until all were delivered to the peer
 * (RC send completion), like `send(publisher).awaitSingleOrNull()`.
 *
 * The flow is collected in the caller's context (its dispatcher, without its [Job]) only as fast
 * as the peer grants credits: a producing flow suspends at `emit` while the connection holds no
 * credit, so nothing buffers without bound. Each emitted message hands one reference to the
 * connection, which releases it once its bytes are in a send buffer.
 *
 * **Cancellation:** cancellable. Cancelling stops collecting [messages] and cancels the send;
 * messages already handed over are still delivered or released by the connection.
 *
 * @throws io.rdmaflux.core.MessageTooLargeException if a message exceeds [RdmaConnection.maxMessageBytes]
 *   (the connection stays usable)
 * @throws io.rdmaflux.core.ConnectionClosedException if the connection is or gets closed or aborted
 * @throws io.rdmaflux.core.RdmaTransportException if the peer or a queue pair failed
 * @throws Throwable whatever [messages] throws, after cancelling the send; messages it emitted
 *   before failing are delivered if credits already carried them, else released with the send
 */
suspend fun RdmaConnection.send(messages: Flow<RdmaMessage>) {
    val context = currentCoroutineContext().minusKey(Job)
    send(messages.asFlux(context)).awaitSingleOrNull()
}

/**
 * Sends one message and suspends until it was delivered. Cancellable and throws as [send].
 */
suspend fun RdmaConnection.sendAwait(message: RdmaMessage) {
    send(Mono.just(message)).awaitSingleOrNull()
}

/**
 * The messages from the peer as a cold [Flow] that keeps credits flowing while it is collected.
 *
 * **Demand:** the flow requests [prefetch] messages when collection starts and tops demand up by
 * `max(1, prefetch / 4)` each time that many were emitted downstream, so outstanding demand never
 * falls below three quarters of [prefetch] and the peer never waits for a whole batch to drain
 * (unlike `receive().asFlow()`, which re-requests only after its buffer emptied). Credits follow
 * demand *and* released buffers: hold a message and you hold a receive buffer.
 *
 * **Ownership:** every emitted message is owned by the collector, which must release it — wrap the
 * body in `message.use { }` ([RdmaMessage] is [AutoCloseable]). Messages buffered in the flow when
 * collection ends (cancellation, error, or an exception thrown downstream) are released by the flow.
 *
 * **Cancellation:** cancellable at every suspension; cancelling (or any downstream exception)
 * cancels the receive subscription, which closes the inbound side of the connection.
 *
 * **Multiple collections:** [RdmaConnection.receive] allows one subscriber per connection, so the
 * flow may be collected once; a second collection throws [IllegalStateException].
 *
 * **Errors:** collection throws [io.rdmaflux.core.RdmaTransportException] if the peer or a queue pair
 * failed, [io.rdmaflux.core.ConnectionClosedException] if the connection was aborted, and
 * [io.rdmaflux.core.RdmaProtocolException] on a peer protocol violation. It completes normally when
 * the peer closed gracefully.
 *
 * @param prefetch messages requested ahead, in [1, 2^20]; more than the node's receive buffers per
 *   rail times rails buys nothing
 * @throws IllegalArgumentException (at once) if [prefetch] is out of range
 */
fun RdmaConnection.receiveAsFlow(prefetch: Int = DEFAULT_PREFETCH): Flow<RdmaMessage> =
    MessageFlow(receive(), prefetch)

/** Default [receiveAsFlow] prefetch: 64 messages, the node's default receive buffers per rail. */
const val DEFAULT_PREFETCH: Int = 64

/**
 * Suspends until the connection is closed — gracefully, aborted or failed.
 *
 * **Cancellation:** cancellable; cancelling does not close the connection.
 */
suspend fun RdmaConnection.awaitClose() {
    onClose().awaitSingleOrNull()
}

/**
 * Closes gracefully (messages in flight are delivered, then a CLOSE frame goes on every rail) and
 * suspends until the connection is closed.
 *
 * **Cancellation:** cancellable; cancelling stops waiting, the close itself carries on.
 */
suspend fun RdmaConnection.closeAwait() {
    close()
    awaitClose()
}

/**
 * Runs [block] with this connection and closes it gracefully afterwards — also when [block] throws
 * or the coroutine is cancelled (then it is aborted, since nobody waits for the graceful close).
 */
suspend inline fun <R> RdmaConnection.useAwait(block: (RdmaConnection) -> R): R {
    var completed = false
    try {
        val result = block(this)
        completed = true
        return result
    } finally {
        if (completed) closeAwait() else abort()
    }
}
