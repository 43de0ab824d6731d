package io.rdmaflux.ud;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;

import java.util.List;

/**
 * The node's device as the RC channel of a reliable UD rail sees it: everything is the real device's, except that
 * completion queues are {@link DatagramCompletionQueue}s, filled by {@link ReliableDatagramQp}s. Closing it closes
 * nothing of the real device.
 */
final class UdDevice implements Device {
    private final Device device;

    UdDevice(Device device) {
        this.device = device;
    }

    @Override
    public String name() {
        return device.name();
    }

    @Override
    public List<Port> ports() {
        return device.ports();
    }

    @Override
    public DeviceCapabilities capabilities() {
        return device.capabilities();
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        return device.allocateProtectionDomain();
    }

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        return new DatagramCompletionQueue(capacity);
    }

    @Override
    public void close() {
        // the real device is the node's
    }
}
