package io.rdmaflux.core;

import io.rdmaflux.core.channel.Subchannel;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.List;

/**
 * A reliable, ordered, flow-controlled message connection between two {@link RdmaNode}s, over one
 * or more rails.
 *
 * <p><b>Flow control:</b> the receiving subscriber's {@code request(n)} becomes receive-buffer
 * credits for the sender: credits granted = receive buffers that are free and covered by
 * outstanding demand; a buffer is free again when the application releases the message. The
 * sender requests from the user's publisher only as many messages as it holds credits for plus a
 * small fixed queue ({@code RdmaNode.Builder.sendQueue}), so nothing buffers without bound,
 * nothing is dropped and no thread blocks waiting for credit.
 *
 * <p><b>Completion:</b> {@link #send} completes when the publisher completed and every message it
 * produced was delivered into a receive buffer of the peer (RC send completion).
 * {@link #receive()} completes when the peer closed gracefully and every message sent before its
 * CLOSE was delivered.
 *
 * <p><b>Errors:</b> a peer failure or a QP error errors both the active {@code send} Mono and the
 * {@code receive} Flux with {@link RdmaTransportException}; a close or abort while they are active
 * errors them with {@link ConnectionClosedException}; a message larger than
 * {@link #maxMessageBytes()} errors only its {@code send} with {@link MessageTooLargeException}
 * (the connection stays usable). Peer protocol violations abort with {@link RdmaProtocolException}.
 *
 * <p><b>Concurrency:</b> all methods are thread-safe. Reactor signals of {@code send} and
 * {@code receive} are emitted from the node's progress thread: move heavy work behind
 * {@code publishOn}.
 *
 * <p><b>Multiple subscriptions:</b> {@code receive()} allows one subscriber for the connection's
 * lifetime; a second gets {@link IllegalStateException}. Several {@code send} Monos may be active;
 * they are served one after another in subscription order.
 */
public interface RdmaConnection {
    /**
     * Sends the messages of {@code messages} in order, handing one reference of each to the
     * connection (it releases them once their bytes are in a send buffer).
     *
     * @return completes when every message was delivered; errors as described above
     */
    Mono<Void> send(Publisher<? extends RdmaMessage> messages);

    /**
     * The messages from the peer, in PSN order. Each must be released by the subscriber (or the
     * operators after it). Cancelling closes the inbound side: queued messages are released and
     * later arrivals are released on arrival.
     */
    Flux<RdmaMessage> receive();

    /** Completes once the connection is closed (gracefully, aborted or failed). */
    Mono<Void> onClose();

    /**
     * Closes gracefully: no new sends are accepted, messages in flight are delivered, then a CLOSE
     * frame goes on every subchannel. Returns at once; {@link #onClose()} tells when it is done.
     */
    void close();

    /** Closes at once: active sends and the receive side error with {@link ConnectionClosedException}. */
    void abort();

    /** Whether the connection is closed or closing. */
    boolean isDisposed();

    /** The largest message the peer accepts, in bytes (negotiated at connect time). */
    int maxMessageBytes();

    /** The subchannels, one per rail, in rail order (read them on the progress thread only). */
    List<? extends Subchannel> subchannels();

    /** A snapshot of the connection's counters, for tests and tools. */
    ConnectionMetrics metrics();
}
