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
import java.util.function.Function;

/**
 * The node's protection domain as the RC channel of one reliable UD (or RC DR) rail sees it: memory is registered in
 * the real one, but an RC queue pair it asks for is a {@link ReliableDatagramQp} on the rail's {@link UdPort} (or on an
 * {@link RcDatagramRail} of its own), whose
 * completions go to the {@link DatagramCompletionQueue} its {@link #device()} made. One per channel; closing it
 * closes nothing of the real domain.
 */
final class UdProtectionDomain implements ProtectionDomain {
    private final ProtectionDomain pd;
    private final UdDevice device;
    private final Function<QpInitAttributes, DatagramRail> rails;
    private final boolean railPerQp;
    private final WriteGrants grants;
    private final DrConfig config;
    private @Nullable ReliableDatagramQp created;

    /** The domain of a reliable UD channel: its queue pair takes a share of the node's {@code rail}. */
    UdProtectionDomain(ProtectionDomain pd, UdPort rail, WriteGrants grants, DrConfig config) {
        this(pd, a -> rail, false, grants, config);
    }

    /**
     * @param rails     the carrier of the queue pair made with the given attributes
     * @param railPerQp whether each queue pair gets a carrier of its own ({@link RcDatagramRail}), released here
     *                  if the queue pair cannot be made
     */
    UdProtectionDomain(ProtectionDomain pd, Function<QpInitAttributes, DatagramRail> rails, boolean railPerQp, WriteGrants grants,
                       DrConfig config) {
        this.pd = pd;
        this.device = new UdDevice(pd.device());
        this.rails = rails;
        this.railPerQp = railPerQp;
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
        DatagramRail rail = rails.apply(attributes);
        ReliableDatagramQp qp;
        try {
            qp = new ReliableDatagramQp(rail, grants, attributes, cq, config);
        } catch (RuntimeException e) {
            if (railPerQp) {
                rail.release(0);
            }
            throw e;
        }
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
