package io.rdmaflux.core.tck;

/**
 * The Connection TCK on the in-JVM fabric, INVOKER nodes, virtual time, over shared receive queues: both
 * nodes' RC connections draw their receive buffers from one SRQ per rail and their send buffers from one
 * shared region per rail ({@code RdmaNode.Builder.sharedReceiveQueue}), buffer credits lent by demand.
 * The pool is small (48 buffers, 8 of them the control reserve) so that the TCK's probe connection and
 * the connection under test compete for it.
 */
class ConnectionTckMemInvokerSrqTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options.node(b -> b.sharedReceiveQueue(48).sharedSendBuffers(96)));
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
