package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.CompletionQueue;
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
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * An {@code ibv_pd} of a {@code disni} device. Registers direct buffers, creates RC queue pairs;
 * refuses what DiSNI cannot do (UD QPs, address handles, SRQs) with a message that says so.
 *
 * <p><b>Concurrency:</b> thread-safe. <b>Lifecycle:</b> {@link #close()} destroys its QPs, deregisters
 * its regions and deallocates the PD; idempotent.
 */
final class DisniProtectionDomain implements ProtectionDomain {
    private final DisniDevice device;
    private final RdmaSeam.Pd pd;
    private final List<DisniMemoryRegion> regions = new ArrayList<>();
    private final List<DisniQueuePair> qps = new ArrayList<>();
    private boolean closed;

    DisniProtectionDomain(DisniDevice device, RdmaSeam.Pd pd) {
        this.device = device;
        this.pd = pd;
    }

    @Override
    public Device device() {
        return device;
    }

    DisniDevice disniDevice() {
        return device;
    }

    RdmaSeam.Pd nativePd() {
        return pd;
    }

    DisniProvider provider() {
        return device.provider();
    }

    private synchronized void checkOpen() {
        if (closed) {
            throw new VerbsException("protection domain on " + device.name() + " is closed");
        }
    }

    @Override
    public MemoryRegion registerMemory(ByteBuffer buffer, int access) {
        checkOpen();
        if (!buffer.isDirect()) {
            throw new VerbsException("registerMemory needs a direct ByteBuffer (DiSNI registers native memory) but got a heap buffer; "
                + "use ByteBuffer.allocateDirect or allocateMemory");
        }
        if (!buffer.hasRemaining()) {
            throw new VerbsException("registerMemory got an empty buffer (position " + buffer.position() + " = limit); register at least 1 byte");
        }
        return register(buffer.slice(), Access.validate(access), false);
    }

    @Override
    public MemoryRegion allocateMemory(long lengthBytes, int access) {
        checkOpen();
        long max = device.capabilities().maxMemoryRegionBytes();
        if (lengthBytes < 1 || lengthBytes > max) {
            throw new VerbsException("allocateMemory length must be in [1, " + max + "] bytes but it was " + lengthBytes);
        }
        Access.validate(access);
        ByteBuffer buffer = ByteBuffer.allocateDirect((int) lengthBytes);
        provider().regionAllocated(lengthBytes);
        try {
            return register(buffer, access, true);
        } catch (RuntimeException e) {
            provider().regionFreed(lengthBytes);
            org.agrona.BufferUtil.free(buffer);
            throw e;
        }
    }

    private MemoryRegion register(ByteBuffer buffer, int access, boolean owned) {
        RdmaSeam.Mr mr;
        try {
            mr = pd.regMr(buffer, NativeCodes.access(access));
        } catch (IOException e) {
            throw new VerbsException("ibv_reg_mr of " + buffer.remaining() + " bytes (" + Access.toString(access) + ") failed: " + e.getMessage(), e);
        }
        DisniMemoryRegion region = new DisniMemoryRegion(this, mr, buffer, owned, access);
        synchronized (this) {
            regions.add(region);
        }
        return region;
    }

    @Override
    public QueuePair createQueuePair(QpInitAttributes attributes) {
        checkOpen();
        if (attributes.type() != QpType.RC) {
            throw new VerbsException("provider 'disni' has no " + attributes.type() + " queue pairs (DiSNI does not marshal UD work requests "
                + "or address handles); use RC, or provider 'soft' for UD");
        }
        if (attributes.srq() != null) {
            throw new VerbsException("provider 'disni' has no shared receive queues (DiSNI does not marshal ibv_srq); create the QP without srq(..)");
        }
        Port port = attributes.port();
        if (port != device.disniPort()) {
            throw new VerbsException("QP attributes name " + port + ", which is not a port of " + device.name() + "; use " + device.name() + ".port(1)");
        }
        for (CompletionQueue cq : List.of(attributes.sendCq(), attributes.receiveCq())) {
            if (!(cq instanceof DisniCompletionQueue d) || d.device() != device) {
                throw new VerbsException("QP attributes name a completion queue that is not of " + device.name() + "; create it with "
                    + device.name() + ".createCompletionQueue(..)");
            }
        }
        int maxWr = device.capabilities().maxQpWorkRequests();
        if (attributes.maxSendWr() > maxWr || attributes.maxReceiveWr() > maxWr) {
            throw new VerbsException("maxSendWr " + attributes.maxSendWr() + " / maxReceiveWr " + attributes.maxReceiveWr()
                + " above the device's " + maxWr);
        }
        if (attributes.maxInlineBytes() > device.capabilities().maxInlineBytes()) {
            throw new VerbsException("maxInlineBytes " + attributes.maxInlineBytes() + " above the device's " + device.capabilities().maxInlineBytes()
                + "; lower it or open the provider with maxInline=" + attributes.maxInlineBytes());
        }
        DisniQueuePair qp = new DisniQueuePair(this, attributes);
        synchronized (this) {
            qps.add(qp);
        }
        return qp;
    }

    /** Always fails: DiSNI does not marshal {@code ibv_srq}. */
    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWorkRequests) {
        throw new VerbsException("provider 'disni' has no shared receive queues (DiSNI does not marshal ibv_srq; capabilities().sharedReceiveQueue() "
            + "is false); post receives on each QP, or use provider 'soft'");
    }

    /** Always fails: UD is not offered. */
    @Override
    public AddressHandle createAddressHandle(Port port, PortAddress destination) {
        throw new VerbsException("provider 'disni' has no UD address handles (DiSNI does not marshal ibv_ah; capabilities().unreliableDatagram() "
            + "is false); use RC queue pairs, or provider 'soft' for UD");
    }

    /** The valid region of this PD holding {@code [address, address + length)}, or null. */
    synchronized @org.jspecify.annotations.Nullable DisniMemoryRegion regionContaining(long address, long length) {
        for (DisniMemoryRegion r : regions) {
            if (r.isValid() && length >= 0 && address >= r.address() && address - r.address() <= r.length() - length) {
                return r;
            }
        }
        return null;
    }

    synchronized void forget(DisniMemoryRegion region) {
        regions.remove(region);
    }

    synchronized void forget(DisniQueuePair qp) {
        qps.remove(qp);
    }

    @Override
    public void close() {
        List<DisniQueuePair> q;
        List<DisniMemoryRegion> r;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            q = List.copyOf(qps);
            r = List.copyOf(regions);
        }
        for (DisniQueuePair qp : q) {
            qp.close();
        }
        for (DisniMemoryRegion mr : r) {
            mr.deregister();
        }
        device.forget(this);
        try {
            pd.dealloc();
        } catch (IOException e) {
            throw new VerbsException("ibv_dealloc_pd failed on " + device.name() + ": " + e.getMessage(), e);
        }
    }
}
