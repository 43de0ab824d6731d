package io.rdmaflux.core.tck;

/**
 * The Connection TCK on the in-JVM fabric, INVOKER nodes, virtual time, with one completion queue per
 * device ({@code RdmaNode.Builder.sharedCompletionQueue}) shared by every connection and rail, completions
 * dispatched by queue pair number, over shared receive queues.
 */
class ConnectionTckMemInvokerSharedCqTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options.node(b -> b.sharedCompletionQueue(16).sharedReceiveQueue(64).sharedSendBuffers(96)));
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
