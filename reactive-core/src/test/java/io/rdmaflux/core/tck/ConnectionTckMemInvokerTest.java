package io.rdmaflux.core.tck;

/** The Connection TCK on the in-JVM fabric, INVOKER nodes, virtual time: deterministic. */
class ConnectionTckMemInvokerTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options);
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
