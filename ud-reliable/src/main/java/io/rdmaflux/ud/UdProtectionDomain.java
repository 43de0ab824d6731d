package io.rdmaflux.ud;

import io.rdmaflux.ud.dr.DrConfig;
import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SharedReceiveQueue;
import io.rdmaflux.verbs.VerbsException;
import org.jspecify.annotations.Nullable;

import java.nio.ByteBuffer;

/**
 * The node's protection domain as the RC channel of one reliable UD rail sees it: memory is registered in the real
 * one, but an RC queue pair it asks for is a {@link ReliableDatagramQp} on the rail's {@link UdPort}, whose
 * completions go to the {@link DatagramCompletionQueue} its {@link #device()} made. One per channel; closing it
 * closes nothing of the real domain.
 */
final class UdProtectionDomain implements ProtectionDomain {
    private final ProtectionDomain pd;
    private final UdDevice device;
    private final UdPort rail;
    private final WriteGrants grants;
    private final DrConfig config;
    private @Nullable ReliableDatagramQp created;

    UdProtectionDomain(ProtectionDomain pd, UdPort rail, WriteGrants grants, DrConfig config) {
        this.pd = pd;
        this.device = new UdDevice(pd.device());
        this.rail = rail;
        this.grants = grants;
        this.config = config;
    }

    /** The queue pair the channel made, or null. */
    @Nullable ReliableDatagramQp created() {
        return created;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public MemoryRegion registerMemory(ByteBuffer buffer, int access) {
        return pd.registerMemory(buffer, access);
    }

    @Override
    public MemoryRegion allocateMemory(long lengthBytes, int access) {
        return pd.allocateMemory(lengthBytes, access);
    }

    @Override
    public QueuePair createQueuePair(QpInitAttributes attributes) {
        if (attributes.type() != QpType.RC) {
            return pd.createQueuePair(attributes);
        }
        if (!(attributes.sendCq() instanceof DatagramCompletionQueue cq) || attributes.receiveCq() != attributes.sendCq()) {
            throw new VerbsException("a reliable UD queue pair needs one completion queue made by this domain's device");
        }
        if (created != null) {
            throw new VerbsException("one reliable UD queue pair per channel; this domain already made " + created);
        }
        ReliableDatagramQp qp = new ReliableDatagramQp(rail, grants, attributes, cq, config);
        created = qp;
        return qp;
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWorkRequests) {
        return pd.createSharedReceiveQueue(maxWorkRequests);
    }

    @Override
    public AddressHandle createAddressHandle(Port port, PortAddress destination) {
        return pd.createAddressHandle(port, destination);
    }

    @Override
    public void close() {
        // the real domain is the node's
    }
}
