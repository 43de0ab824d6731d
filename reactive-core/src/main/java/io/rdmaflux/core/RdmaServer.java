package io.rdmaflux.core;

import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * A listening endpoint of an {@link RdmaNode} ({@link RdmaNode#bind}).
 *
 * <p><b>Multiple subscriptions:</b> {@link #accept()} allows one subscriber; connections accepted
 * before it subscribes are buffered for it. <b>Lifecycle:</b> {@link #close()} stops listening and
 * completes {@code accept()}; established connections stay open.
 */
public final class RdmaServer implements AutoCloseable {
    private final ConnectionManager.Listener listener;
    private final Sinks.Many<RdmaConnection> accepted;

    RdmaServer(ConnectionManager.Listener listener, Sinks.Many<RdmaConnection> accepted) {
        this.listener = listener;
        this.accepted = accepted;
    }

    /** Where peers connect (with the real service number when 0 was bound). */
    public PortAddress address() {
        return listener.address();
    }

    /** The accepted connections, in accept order. */
    public Flux<RdmaConnection> accept() {
        return accepted.asFlux();
    }

    @Override
    public void close() {
        listener.close();
        synchronized (accepted) {
            accepted.tryEmitComplete();
        }
    }
}
