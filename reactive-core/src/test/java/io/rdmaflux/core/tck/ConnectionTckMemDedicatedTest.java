package io.rdmaflux.core.tck;

/** The Connection TCK on the in-JVM fabric, DEDICATED nodes (a progress thread each), real time. */
class ConnectionTckMemDedicatedTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return RealTimePair.mem(options);
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
