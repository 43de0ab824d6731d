package io.rdmaflux.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmaflux.core.RdmaConnection;
import io.rsocket.DuplexConnection;
import io.rsocket.RSocketErrorException;
import io.rsocket.frame.ErrorFrameCodec;
import io.rsocket.internal.UnboundedProcessor;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;

import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An RSocket {@link DuplexConnection} over one {@link RdmaConnection}: one RSocket frame is one rdmaflux
 * message, so no length prefix and no frame decoder.
 *
 * <p><b>Sending:</b> {@link #sendFrame} queues the frame in RSocket's {@link UnboundedProcessor} (stream 0,
 * connection-level frames, ahead of the others), which is the one publisher given to
 * {@link RdmaConnection#send}. The connection takes frames from it only as fast as it holds credits for the
 * peer's receive buffers (plus the node's small send queue), and copies each frame once, from the
 * {@link ByteBuf} into the registered send buffer ({@link FrameMessage}); the frame is released once the
 * message was delivered, or at once when it is discarded. RSocket's {@code sendFrame} cannot push back, so
 * frames RSocket emits beyond those credits wait in the processor: how many is bounded by RSocket itself,
 * by the {@code request(n)} of the peer's subscribers (a responder emits only what was requested).
 *
 * <p><b>Receiving:</b> {@link #receive()} copies each message once into a {@code ByteBuf} from
 * {@link #alloc()} and releases the message at once, so its receive buffer (and a credit to the peer) is
 * free again before RSocket sees the frame ({@link FrameReceiver}); the frame is released when RSocket's
 * {@code onNext} returns. The demand RSocket signals on {@code receive()} is the rdmaflux demand: RSocket
 * 1.1 asks for {@code Long.MAX_VALUE}, so the peer may send as many frames as this side has free receive
 * buffers. Since RSocket handles each frame inside {@code onNext} on the node's progress thread, a
 * subscriber that is slow there holds the progress thread, no buffer is freed and no credit returns: the
 * peer's connection stops taking frames once its credits are spent (the module README shows this and what
 * it bounds).
 *
 * <p><b>Closing:</b> {@link #dispose()} lets the frames already queued go out, then closes the rdmaflux
 * connection gracefully; {@link #sendErrorAndClose} queues an ERROR frame as the last one. Both are bounded:
 * a connection not closed {@link #CLOSE_GRACE} after them (frames that wait for credits a peer never grants,
 * a peer that never answers the close) is aborted, so {@link #onClose()} always completes. A peer that
 * closes (the receive side completes) or a connection that fails disposes this one too. {@link #onClose()}
 * completes (never errors) once the rdmaflux connection terminated; a transport error reaches RSocket as
 * the error of {@code receive()}.
 *
 * <p><b>Buffers:</b> every {@code ByteBuf} given to {@link #sendFrame} is released exactly once: after its
 * delivery, on discard (cancel, error, close) by the connection, or by the processor when the connection is
 * already disposed. Every frame {@link #receive()} emits is released once, after {@code onNext}.
 *
 * <p><b>Concurrency:</b> {@code sendFrame}, {@code sendErrorAndClose} and {@code dispose} may be called from
 * any thread; {@code receive()} signals on the node's progress thread. {@code receive()} allows one
 * subscriber (rdmaflux's receive side has one for the connection's lifetime).
 */
public final class RdmaDuplexConnection implements DuplexConnection {
    private final RdmaConnection connection;
    private final ByteBufAllocator alloc;
    private final SocketAddress remoteAddress;
    private final UnboundedProcessor sender = new UnboundedProcessor();
    /** How long {@link #dispose()} and {@link #sendErrorAndClose} wait for a graceful close before aborting. */
    public static final java.time.Duration CLOSE_GRACE = java.time.Duration.ofSeconds(5);

    private final Sinks.Empty<Void> onClose = Sinks.empty();
    private final AtomicBoolean disposed = new AtomicBoolean();
    private final AtomicBoolean terminated = new AtomicBoolean();
    private final reactor.core.Disposable.Swap graceTimer = reactor.core.Disposables.swap();

    RdmaDuplexConnection(RdmaConnection connection, ByteBufAllocator alloc, SocketAddress remoteAddress) {
        this.connection = connection;
        this.alloc = alloc;
        this.remoteAddress = remoteAddress;
        connection.onClose().subscribe(null, e -> closed(), this::closed);
        // the send completes once the processor completed (dispose, ERROR frame) and its frames were delivered
        connection.send(sender.map(FrameMessage::new)).subscribe(null, e -> {
            disposed.set(true);
            sender.dispose();
            connection.abort();
        }, connection::close);
    }

    private void closed() {
        terminated.set(true);
        graceTimer.dispose();
        disposed.set(true);
        // frames RSocket sends after the end are released by the processor
        sender.dispose();
        onClose.tryEmitEmpty();
    }

    /** The rdmaflux connection under this one, for its metrics and subchannel snapshots. */
    public RdmaConnection rdmaConnection() {
        return connection;
    }

    /**
     * Frames RSocket queued that the rdmaflux connection has not taken yet: they wait for credits from
     * the peer. RSocket's own {@code request(n)} bounds them (a responder emits only what was requested).
     * Any thread; a snapshot.
     */
    public int framesQueued() {
        return sender.size();
    }

    @Override
    public void sendFrame(int streamId, ByteBuf frame) {
        if (streamId == 0) {
            sender.tryEmitPrioritized(frame);
        } else {
            sender.tryEmitNormal(frame);
        }
    }

    @Override
    public void sendErrorAndClose(RSocketErrorException e) {
        ByteBuf frame = ErrorFrameCodec.encode(alloc, 0, e);
        disposed.set(true);
        sender.tryEmitFinal(frame);
        abortIfNotClosedAfterGrace();
    }

    /** Aborts the rdmaflux connection if it has not terminated {@link #CLOSE_GRACE} from now. */
    private void abortIfNotClosedAfterGrace() {
        if (!terminated.get()) {
            graceTimer.replace(Mono.delay(CLOSE_GRACE).subscribe(x -> {
                if (!terminated.get()) {
                    connection.abort();
                }
            }));
        }
    }

    @Override
    public Flux<ByteBuf> receive() {
        return connection.receive()
            .transform(Operators.<io.rdmaflux.core.RdmaMessage, ByteBuf>lift((scannable, actual) -> new FrameReceiver(actual, alloc)))
            .doOnTerminate(this::dispose);
    }

    @Override
    public ByteBufAllocator alloc() {
        return alloc;
    }

    @Override
    public SocketAddress remoteAddress() {
        return remoteAddress;
    }

    @Override
    public Mono<Void> onClose() {
        return onClose.asMono();
    }

    @Override
    public void dispose() {
        if (disposed.compareAndSet(false, true)) {
            sender.onComplete();
            abortIfNotClosedAfterGrace();
        }
    }

    @Override
    public boolean isDisposed() {
        return disposed.get();
    }

    @Override
    public String toString() {
        return "RdmaDuplexConnection{" + connection + "}";
    }
}
