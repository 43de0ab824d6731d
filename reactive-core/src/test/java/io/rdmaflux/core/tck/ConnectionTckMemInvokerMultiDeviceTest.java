package io.rdmaflux.core.tck;

/**
 * The Connection TCK on the in-JVM fabric, INVOKER nodes, virtual time, with nodes over several devices:
 * rail {@code r} is port 1 of device {@code r} (two devices at least), so each rail has its own protection
 * domain, registrations and keys, large messages stripe over devices with one rkey per rail in the CTS, and
 * a rail fault is a fault of one device's port.
 */
class ConnectionTckMemInvokerMultiDeviceTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return VirtualTimeMemPair.overDevices(options);
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
