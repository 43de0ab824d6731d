package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortAddress;

/** A soft UD address handle: the destination resolved once into a transport {@link Route}. */
final class SoftAddressHandle implements AddressHandle {
    private final SoftProtectionDomain pd;
    private final SoftPort port;
    final Route route;
    private volatile boolean closed;

    SoftAddressHandle(SoftProtectionDomain pd, SoftPort port, Route route) {
        this.pd = pd;
        this.port = port;
        this.route = route;
    }

    SoftProtectionDomain pd() {
        return pd;
    }

    @Override
    public PortAddress destination() {
        return route.destination();
    }

    @Override
    public Port port() {
        return port;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            pd.forget(this);
        }
    }

    @Override
    public String toString() {
        return "ah{" + port.address() + " -> " + destination() + "}";
    }
}
