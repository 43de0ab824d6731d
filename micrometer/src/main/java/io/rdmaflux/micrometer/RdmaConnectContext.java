package io.rdmaflux.micrometer;

import io.micrometer.observation.Observation;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.verbs.PortAddress;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Observation.Context} of one {@code connect} observed by {@link RdmaNodeMetrics#connect}:
 * what an {@code ObservationHandler} may read beyond the key values (the node, the peer's address, the
 * spec asked for, and the connection once established).
 *
 * <p><b>Concurrency:</b> the connection is set on the thread that completed the connect, before the
 * observation stops; handlers see it in {@code onStop}.
 */
public final class RdmaConnectContext extends Observation.Context {
    private final RdmaNode node;
    private final PortAddress address;
    private final ConnectionSpec spec;
    private volatile @Nullable RdmaConnection connection;

    RdmaConnectContext(RdmaNode node, PortAddress address, ConnectionSpec spec) {
        this.node = node;
        this.address = address;
        this.spec = spec;
    }

    /** The connecting node. */
    public RdmaNode node() {
        return node;
    }

    /** The address connected to (a high-cardinality value: never a meter tag). */
    public PortAddress address() {
        return address;
    }

    /** The spec the connect asked for. */
    public ConnectionSpec spec() {
        return spec;
    }

    /** The connection once established; null before, or when the connect failed or was cancelled. */
    public @Nullable RdmaConnection connection() {
        return connection;
    }

    void connection(RdmaConnection c) {
        this.connection = c;
    }
}
