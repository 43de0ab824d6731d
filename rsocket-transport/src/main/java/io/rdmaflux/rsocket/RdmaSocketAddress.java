package io.rdmaflux.rsocket;

import io.rdmaflux.verbs.PortAddress;

import java.net.SocketAddress;
import java.util.Objects;

/**
 * The {@link SocketAddress} an {@link RdmaDuplexConnection} reports as its remote address: the server's
 * {@link PortAddress} on the client side, and on the server side the accepted connection's description
 * (rdmaflux does not expose the connecting peer's port address).
 */
public final class RdmaSocketAddress extends SocketAddress {
    private static final long serialVersionUID = 1L;
    private final String description;

    RdmaSocketAddress(String description) {
        this.description = Objects.requireNonNull(description, "description");
    }

    static RdmaSocketAddress of(PortAddress address) {
        return new RdmaSocketAddress(address.toString());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RdmaSocketAddress a && a.description.equals(description);
    }

    @Override
    public int hashCode() {
        return description.hashCode();
    }

    @Override
    public String toString() {
        return description;
    }
}
