package io.rdmaflux.core.tck;

/** The fault matrix, RC send/receive channels, in-JVM fabric, INVOKER nodes in virtual time. */
class FaultMatrixRcMemTest extends FaultMatrix {
    @Override
    protected String kind() {
        return "RC send/recv";
    }

    @Override
    protected String fabric() {
        return "mem (virtual time)";
    }

    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options);
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
