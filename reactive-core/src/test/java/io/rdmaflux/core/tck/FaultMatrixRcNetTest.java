package io.rdmaflux.core.tck;

/** The fault matrix, RC send/receive channels, IP fabric on loopback, real time (no port failure, no wire faults there). */
class FaultMatrixRcNetTest extends FaultMatrix {
    @Override
    protected String kind() {
        return "RC send/recv";
    }

    @Override
    protected String fabric() {
        return "net loopback";
    }

    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return RealTimePair.net(options);
    }

    @Override
    protected boolean supportsRailFaults() {
        return false;
    }
}
