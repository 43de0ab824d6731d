package io.rdmaflux.core.tck;

import io.rdmaflux.core.RendezvousMode;

/**
 * The Connection TCK on the in-JVM fabric, INVOKER nodes, virtual time, with the READ rendezvous
 * ({@code ConnectionSpec.rendezvous(READ)}): every large message is pulled by the receiver with RDMA
 * READs and finished by a READ_FIN, rail faults and failovers included.
 */
class ConnectionTckMemInvokerReadTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options.spec(s -> s.rendezvous(RendezvousMode.READ)));
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
