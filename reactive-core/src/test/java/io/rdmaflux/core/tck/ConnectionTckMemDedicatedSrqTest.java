package io.rdmaflux.core.tck;

/**
 * The Connection TCK on the in-JVM fabric, DEDICATED nodes (a progress thread each), real time, over shared
 * receive queues and shared send regions ({@code RdmaNode.Builder.sharedReceiveQueue}): the connecting
 * thread sends its first frame from the shared send region while the progress thread serves the others.
 */
class ConnectionTckMemDedicatedSrqTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return RealTimePair.mem(options.node(b -> b.sharedReceiveQueue(256).sharedSendBuffers(160)));
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
