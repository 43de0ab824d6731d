package io.rdmaflux.rsocket;

import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rsocket.Closeable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * What {@link RdmaServerTransport#start} returns: the listening endpoint. {@link #dispose()} stops
 * listening and completes {@link #onClose()}; connections already accepted stay open until RSocket or
 * the peer closes them (as RSocket's TCP server channel). Thread-safe; dispose is idempotent.
 */
public final class RdmaServerChannel implements Closeable {
    private final RdmaServer server;
    private final Disposable accepting;
    private final Sinks.Empty<Void> onClose = Sinks.empty();

    RdmaServerChannel(RdmaServer server, Disposable accepting) {
        this.server = server;
        this.accepting = accepting;
    }

    /** Where clients connect (with the real service number when 0 was bound). */
    public PortAddress address() {
        return server.address();
    }

    @Override
    public Mono<Void> onClose() {
        return onClose.asMono();
    }

    @Override
    public void dispose() {
        server.close();
        accepting.dispose();
        onClose.tryEmitEmpty();
    }

    @Override
    public boolean isDisposed() {
        return accepting.isDisposed();
    }

    @Override
    public String toString() {
        return "RdmaServerChannel{" + server.address() + "}";
    }
}
