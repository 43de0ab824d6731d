package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.PortState;

/**
 * The one port of a {@code disni} device. DiSNI has no {@code ibv_query_port}: MTU, bandwidth and
 * latency are what the provider's options say, the state is always ACTIVE (a link that goes down shows
 * as RETRY_EXC_ERR completions of the QPs on it), and the address is {@code disni://<ip>:0}, the IP
 * {@code rdma_cm} reaches the device by.
 */
final class DisniPort implements Port {
    private final DisniDevice device;
    private final PortAddress address;
    private final DisniOptions options;

    DisniPort(DisniDevice device, String ip, DisniOptions options) {
        this.device = device;
        this.address = new PortAddress(DisniProvider.FABRIC, ip, 0);
        this.options = options;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public int number() {
        return 1;
    }

    @Override
    public PortAddress address() {
        return address;
    }

    @Override
    public PortState state() {
        return PortState.ACTIVE;
    }

    @Override
    public int mtuBytes() {
        return options.mtuBytes();
    }

    @Override
    public long bandwidthBytesPerSec() {
        return options.bandwidthBytesPerSec();
    }

    @Override
    public long latencyNs() {
        return options.latencyNs();
    }

    @Override
    public String toString() {
        return "port{" + device.name() + ":1, " + address + "}";
    }
}
