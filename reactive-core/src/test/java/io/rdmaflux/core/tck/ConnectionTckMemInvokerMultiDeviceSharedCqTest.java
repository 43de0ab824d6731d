package io.rdmaflux.core.tck;

/**
 * The Connection TCK over nodes on several devices ({@link ConnectionTckMemInvokerMultiDeviceTest}) with one
 * shared completion queue per device and shared receive queues per rail.
 */
class ConnectionTckMemInvokerMultiDeviceSharedCqTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return VirtualTimeMemPair.overDevices(options.node(b -> b.sharedCompletionQueue(16).sharedReceiveQueue(64).sharedSendBuffers(96)));
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
