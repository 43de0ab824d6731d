package io.rdmaflux.core;

import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import reactor.core.publisher.Sinks;

import java.util.ArrayList;
import java.util.List;

/**
 * The servers a node listens with: each listens at one address of the provider's connection manager, hands every
 * connection request to the node's {@link ConnectionEstablishment} and emits the connections it accepts to its
 * {@link RdmaServer#accept()} subscriber.
 *
 * <p><b>Concurrency:</b> thread-safe. <b>Lifecycle:</b> {@link #close()} (by the node's close) stops every
 * server; the node refuses {@code bind} from then on.
 */
final class NodeServers implements AutoCloseable {
    private final ConnectionManager cm;
    private final ConnectionEstablishment establishment;
    private final List<RdmaServer> servers = new ArrayList<>();

    NodeServers(ConnectionManager cm, ConnectionEstablishment establishment) {
        this.cm = cm;
        this.establishment = establishment;
    }

    /** {@link RdmaNode#bind}: listens at {@code address}. */
    RdmaServer bind(PortAddress address) {
        Sinks.Many<RdmaConnection> sink = Sinks.many().unicast().onBackpressureBuffer();
        ConnectionManager.Listener listener = cm.listen(address,
            (from, request) -> establishment.accept(from, request, c -> {
                synchronized (sink) {
                    sink.tryEmitNext(c);
                }
            }));
        RdmaServer server = new RdmaServer(listener, sink);
        synchronized (servers) {
            servers.add(server);
        }
        return server;
    }

    @Override
    public void close() {
        synchronized (servers) {
            servers.forEach(RdmaServer::close);
            servers.clear();
        }
    }
}
