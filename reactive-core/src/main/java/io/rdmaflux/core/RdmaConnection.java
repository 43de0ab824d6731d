package io.rdmaflux.core;

import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.core.onesided.Epoch;
import io.rdmaflux.core.onesided.OneSided;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.core.onesided.Transfer;
import io.rdmaflux.verbs.MemoryRegion;
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
 * produced was delivered into a receive buffer of the peer (RC send completion); if the peer's
 * inbound side closes before then, it errors instead unless the peer's subscriber got every one of
 * its messages (see Errors). {@link #receive()} completes when the peer closed
 * gracefully and every message sent before its CLOSE was delivered. {@link #onClose()} of a graceful
 * close completes once both sides closed: a side that closes keeps taking (and granting credit
 * for) the peer's messages until the peer has sent all it had under way, so a close from either
 * side, or both at once, ends with every such message delivered. It waits for a {@code receive()}
 * subscriber that is there, however slow, and for one that may still come (the peer has not closed
 * yet); it never waits for messages the peer said it will not take. {@link #abort()} ends any
 * wait at once.
 *
 * <p><b>The inbound side:</b> it closes when the {@code receive()} subscriber cancels (or its
 * {@code onNext} throws), or when this side closes while nobody ever subscribed to
 * {@code receive()} (a later subscriber gets {@link ConnectionClosedException} "closed before receive()
 * was subscribed"). The peer is told at once, with the first PSN the subscriber did not get. A peer
 * that closes having sent every message it numbered ends the stream with completion, a subscriber
 * that comes later included (a peer that closes without sending is an empty stream).
 *
 * <p><b>Errors:</b> a publisher given to {@code send} that signals {@code onError} (or whose fused
 * {@code map} throws) fails that send with its error once the messages it emitted before were
 * delivered; the connection stays usable. A peer failure or a QP error errors both the active {@code send} Mono and the
 * {@code receive} Flux with {@link RdmaTransportException}; a close or abort while they are active
 * errors them with {@link ConnectionClosedException}; a message larger than
 * {@link #maxMessageBytes()} errors only its {@code send} with {@link MessageTooLargeException}
 * (the connection stays usable). Peer protocol violations abort with {@link RdmaProtocolException}.
 * When the peer's inbound side closes, every {@code send} with a message its subscriber did not get
 * (sent after it stopped taking them, or not sent yet) errors with a {@link ConnectionClosedException}
 * ({@link ConnectionClosedException#byPeer() byPeer}) whose message names this connection, how many
 * of the send's messages were not delivered and how many the subscriber got, e.g. {@code "client/conn1
 * (to mem://soft1:1024): 3 messages of this send() were not delivered: the peer closed its inbound
 * side (...) after its subscriber got 2 of them"}; a publisher still emitting is cancelled, and the
 * error comes once the send's messages already on the wire completed. Later sends error at once ({@code "send()
 * refused: ..."}); a send whose every message the subscriber got still completes. Messages already
 * delivered are not affected: they stay valid until released.
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
     * connection (it releases them once their bytes are in a send buffer). A message taken from
     * {@code messages} that will not be sent (the send was cancelled, failed or closed first) goes to
     * the discard hook of the returned Mono's subscriber, if any
     * ({@code send(..).doOnDiscard(RdmaMessage.class, ..)}), and is then released unless the hook
     * released it. On a connection already closed the send errors at once and takes (and so discards)
     * at most 65 536 messages from {@code messages} before cancelling it.
     *
     * @return completes when every message was delivered; errors as described above
     */
    Mono<Void> send(Publisher<? extends RdmaMessage> messages);

    /**
     * The messages from the peer, in PSN order. Each must be released by the subscriber (or the
     * operators after it). Cancelling closes the inbound side: queued messages are released, later
     * arrivals are released on arrival, and the peer's sends fail with the messages not delivered
     * (see the class documentation).
     */
    Flux<RdmaMessage> receive();

    /** Completes once the connection is closed (gracefully, aborted or failed). */
    Mono<Void> onClose();

    /**
     * Closes gracefully: no new sends are accepted (a send not yet started errors with
     * {@link ConnectionClosedException}), the sends under way finish, then a CLOSE frame goes on every
     * subchannel; this side keeps receiving until the peer closed too, and a FINAL frame each way ends
     * the exchange. Without a {@code receive()} subscriber it closes the inbound side first, so the
     * peer's pending sends fail instead of waiting. Returns at once; {@link #onClose()} tells when it is
     * done (see Completion for what it waits for).
     */
    void close();

    /** Closes at once: active sends and the receive side error with {@link ConnectionClosedException}. */
    void abort();

    /** Whether the connection is closed or closing. */
    boolean isDisposed();

    /** The largest message the peer accepts, in bytes (negotiated at connect time). */
    int maxMessageBytes();

    /**
     * Immutable snapshots of the subchannels, one per rail, in rail order: rail, port, channel kind,
     * state, buffer credits held, bytes and messages sent. Safe on any thread; each call takes a new
     * picture, whose values may lag the progress thread by a duty cycle.
     */
    List<SubchannelSnapshot> subchannels();

    /**
     * The rendezvous mode this connection uses for large messages, both directions: the connecting
     * side's {@link ConnectionSpec#rendezvous(RendezvousMode)}, or {@link RendezvousMode#WRITE} when the
     * peer or a rail's channel kind has no READ rendezvous. Any thread.
     */
    default RendezvousMode rendezvousMode() {
        return RendezvousMode.WRITE;
    }

    /** A snapshot of the connection's counters, for tests and tools. */
    ConnectionMetrics metrics();

    // ---------------------------------------------------------------- one-sided RDMA (seed 002)

    /**
     * One-sided RDMA on this connection: exposing memory, put, get, epochs (see {@link OneSided}). The
     * methods below delegate to it.
     *
     * @throws UnsupportedOperationException for an implementation without one-sided support (the default)
     */
    default OneSided oneSided() {
        throw new UnsupportedOperationException(getClass().getName() + " has no one-sided RDMA");
    }

    /** {@link OneSided#expose(MemoryRegion, RemoteAccess)}: exposes all of {@code region} to the peer. */
    default Mono<RemoteRegion> expose(MemoryRegion region, RemoteAccess access) {
        return oneSided().expose(region, access);
    }

    /** {@link OneSided#expose(MemoryRegion, long, long, RemoteAccess)}: exposes {@code [offset, +lengthBytes)} of {@code region}. */
    default Mono<RemoteRegion> expose(MemoryRegion region, long offset, long lengthBytes, RemoteAccess access) {
        return oneSided().expose(region, offset, lengthBytes, access);
    }

    /** {@link OneSided#remoteRegions()}: the regions the peer exposed. */
    default Flux<RemoteRegion> remoteRegions() {
        return oneSided().remoteRegions();
    }

    /** {@link OneSided#put}: RDMA WRITE of {@code lengthBytes} from {@code local} into {@code remote}, striped over the rails. */
    default Mono<Void> put(MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes) {
        return oneSided().put(local, localOffset, remote, remoteOffset, lengthBytes);
    }

    /** {@link OneSided#get}: RDMA READ of {@code lengthBytes} from {@code remote} into {@code local}, striped over the rails. */
    default Mono<Void> get(MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes) {
        return oneSided().get(local, localOffset, remote, remoteOffset, lengthBytes);
    }

    /** {@link OneSided#fetchAndAdd}: atomically adds {@code delta} to the 8-byte word at {@code offsetBytes}; emits the value before. */
    default Mono<Long> fetchAndAdd(RemoteRegion remote, long offsetBytes, long delta) {
        return oneSided().fetchAndAdd(remote, offsetBytes, delta);
    }

    /** {@link OneSided#compareAndSwap}: atomically swaps in {@code update} if the word equals {@code expect}; emits the value before. */
    default Mono<Long> compareAndSwap(RemoteRegion remote, long offsetBytes, long expect, long update) {
        return oneSided().compareAndSwap(remote, offsetBytes, expect, update);
    }

    /** {@link OneSided#transfers}: puts and gets as a stream, at most {@code maxOutstandingBytes} in flight. */
    default Flux<Transfer> transfers(Publisher<Transfer> transfers, long maxOutstandingBytes) {
        return oneSided().transfers(transfers, maxOutstandingBytes);
    }

    /** {@link OneSided#fence()}: ends the access epoch; completes once the target holds every put of it. */
    default Mono<Epoch> fence() {
        return oneSided().fence();
    }

    /** {@link OneSided#epochs()}: the peer's completed access epochs. */
    default Flux<Epoch> epochs() {
        return oneSided().epochs();
    }
}
