package io.rdmaflux.core.internal.lazy;

import io.rdmaflux.core.ConnectionClosedException;
import io.rdmaflux.core.ConnectionMetrics;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RendezvousMode;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * A connection established on first use (seed 003 &sect;3.2, {@code ConnectionSpec.lazy(true)}): made
 * without queue pairs, buffers or a handshake; the first {@link #send} or {@link #receive()} subscribed
 * runs the connector (the node's ordinary connect), and every call then goes to the connection it made.
 *
 * <p><b>Errors:</b> if the connector fails, every send and receive (the one that started it and all
 * later ones) errors with an {@link RdmaException} of category {@link RdmaException.Category#CONNECT}
 * naming the address, the connector's error as its cause, and {@link #onClose()} completes. After
 * {@link #close()} or {@link #abort()} before first use no connect is ever made and sends error with
 * {@link ConnectionClosedException}.
 *
 * <p><b>Before first use</b> {@link #metrics()} is all zeros, {@link #subchannels()} is empty and
 * {@link #maxMessageBytes()} is the local node's limit (the peer's is known once established).
 *
 * <p><b>Concurrency:</b> thread-safe; the connect starts once, whichever thread uses the connection first.
 */
public final class LazyConnection implements RdmaConnection {
    private final String address;
    private final int localMaxMessageBytes;
    private final Supplier<Mono<RdmaConnection>> connector;
    private final AtomicBoolean started = new AtomicBoolean();
    private final Sinks.One<RdmaConnection> ready = Sinks.one();
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private volatile @Nullable RdmaConnection delegate;
    private volatile boolean closing;
    private volatile boolean aborting;
    private volatile @Nullable RdmaException failure;

    /**
     * @param address              the peer's address, for messages
     * @param localMaxMessageBytes this node's largest message, reported until established
     * @param connector            establishes the connection (subscribed once, on first use)
     */
    public LazyConnection(String address, int localMaxMessageBytes, Supplier<Mono<RdmaConnection>> connector) {
        this.address = address;
        this.localMaxMessageBytes = localMaxMessageBytes;
        this.connector = connector;
    }

    /** Whether establishment started (the connection was used). */
    public boolean isStarted() {
        return started.get();
    }

    /** The established connection, or null before it is (or if it failed). */
    public @Nullable RdmaConnection established() {
        return delegate;
    }

    private Mono<RdmaConnection> connection() {
        if (started.compareAndSet(false, true)) {
            Mono<RdmaConnection> connect;
            try {
                connect = connector.get();
            } catch (RuntimeException e) {
                connect = Mono.error(e);
            }
            connect.subscribe(this::onEstablished, this::onConnectFailed);
        }
        return ready.asMono();
    }

    private void onEstablished(RdmaConnection c) {
        delegate = c;
        c.onClose().subscribe(null, e -> closed.tryEmitEmpty(), closed::tryEmitEmpty);
        ready.tryEmitValue(c);
        // closed while the connect ran: the connection made is closed at once
        if (aborting) {
            c.abort();
        } else if (closing) {
            c.close();
        }
    }

    private void onConnectFailed(Throwable e) {
        RdmaException err = new RdmaException(RdmaException.Category.CONNECT, "lazy connection to " + address
            + " could not be established on first use: " + e.getMessage(), null, e);
        failure = err;
        ready.tryEmitError(err);
        closed.tryEmitEmpty();
    }

    private @Nullable RdmaException closedBeforeUse() {
        if (closing && !started.get()) {
            return new ConnectionClosedException("lazy connection to " + address + " was closed before its first use", false);
        }
        return null;
    }

    @Override
    public Mono<Void> send(Publisher<? extends RdmaMessage> messages) {
        return Mono.defer(() -> {
            RdmaException e = closedBeforeUse();
            return e != null ? Mono.error(e) : connection().flatMap(c -> c.send(messages));
        });
    }

    @Override
    public Flux<RdmaMessage> receive() {
        return Flux.defer(() -> {
            RdmaException e = closedBeforeUse();
            return e != null ? Flux.error(e) : connection().flatMapMany(RdmaConnection::receive);
        });
    }

    @Override
    public Mono<Void> onClose() {
        return closed.asMono();
    }

    @Override
    public void close() {
        closing = true;
        RdmaConnection c = delegate;
        if (c != null) {
            c.close();
        } else if (started.compareAndSet(false, true)) {
            // never used: nothing to tear down, and no connect will start
            ready.tryEmitError(new ConnectionClosedException("lazy connection to " + address + " was closed before its first use", false));
            closed.tryEmitEmpty();
        }
    }

    @Override
    public void abort() {
        aborting = true;
        closing = true;
        RdmaConnection c = delegate;
        if (c != null) {
            c.abort();
        } else {
            close();
        }
    }

    @Override
    public boolean isDisposed() {
        RdmaConnection c = delegate;
        return closing || failure != null || (c != null && c.isDisposed());
    }

    @Override
    public int maxMessageBytes() {
        RdmaConnection c = delegate;
        return c != null ? c.maxMessageBytes() : localMaxMessageBytes;
    }

    @Override
    public List<SubchannelSnapshot> subchannels() {
        RdmaConnection c = delegate;
        return c != null ? c.subchannels() : List.of();
    }

    @Override
    public RendezvousMode rendezvousMode() {
        RdmaConnection c = delegate;
        return c != null ? c.rendezvousMode() : RendezvousMode.WRITE;
    }

    @Override
    public ConnectionMetrics metrics() {
        RdmaConnection c = delegate;
        return c != null ? c.metrics() : new ConnectionMetrics(0, 0, 0, 0, 0, 0, 0, Map.of(), Map.of(), 0, 0, 0, 0, 0);
    }

    @Override
    public String toString() {
        RdmaConnection c = delegate;
        return c != null ? c.toString() : "LazyConnection{" + address + (started.get() ? ", connecting" : ", not used yet")
            + (failure != null ? ", failed" : "") + (closing ? ", closed" : "") + "}";
    }
}
