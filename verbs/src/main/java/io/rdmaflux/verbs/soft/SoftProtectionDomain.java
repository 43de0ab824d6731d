package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SharedReceiveQueue;
import io.rdmaflux.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A soft protection domain: owns its regions, QPs, SRQs and address handles and closes them with itself. */
final class SoftProtectionDomain implements ProtectionDomain {
    private final SoftDevice device;
    private final Set<Object> owned = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    SoftProtectionDomain(SoftDevice device) {
        this.device = device;
    }

    @Override
    public Device device() {
        return device;
    }

    SoftDevice softDevice() {
        return device;
    }

    private void checkOpen(String what) {
        if (closed) {
            throw new VerbsException("cannot " + what + ": the protection domain is closed; allocate a new one");
        }
        device.checkOpen(what);
    }

    @Override
    public MemoryRegion registerMemory(ByteBuffer buffer, int access) {
        checkOpen("register memory");
        Access.validate(access);
        if (!buffer.isDirect()) {
            throw new VerbsException("cannot register a heap ByteBuffer; pass a direct buffer (ByteBuffer.allocateDirect) "
                + "or use allocateMemory(..)");
        }
        if (buffer.isReadOnly()) {
            throw new VerbsException("cannot register a read-only ByteBuffer; the NIC must be able to write it");
        }
        int len = buffer.remaining();
        if (len == 0) {
            throw new VerbsException("cannot register an empty region: buffer position " + buffer.position()
                + " equals its limit; set position/limit to the bytes to register");
        }
        return register(buffer.slice(buffer.position(), len), access, false);
    }

    @Override
    public MemoryRegion allocateMemory(long lengthBytes, int access) {
        checkOpen("allocate memory");
        Access.validate(access);
        long max = device.capabilities().maxMemoryRegionBytes();
        if (lengthBytes < 1 || lengthBytes > max) {
            throw new VerbsException("lengthBytes must be in [1, " + max + "] but it was " + lengthBytes);
        }
        ByteBuffer b = ByteBuffer.allocateDirect((int) lengthBytes);
        SoftMemoryRegion mr = register(b, access, true);
        SoftResources.ALLOCATED_BYTES.addAndGet(lengthBytes);
        device.provider().allocatedBytes.addAndGet(lengthBytes);
        return mr;
    }

    private SoftMemoryRegion register(ByteBuffer base, int access, boolean allocated) {
        SoftMemoryRegion mr = device.resources().addRegion(this, base, access, allocated);
        owned.add(mr);
        SoftResources.LIVE_MEMORY_REGIONS.incrementAndGet();
        device.provider().liveRegions.incrementAndGet();
        return mr;
    }

    @Override
    public QueuePair createQueuePair(QpInitAttributes a) {
        checkOpen("create a queue pair");
        if (a.port().device() != device) {
            throw new VerbsException("QP port " + a.port().address() + " belongs to device '" + a.port().device().name()
                + "', not to this protection domain's device '" + device.name() + "'");
        }
        checkCq("send", a.sendCq());
        checkCq("receive", a.receiveCq());
        DeviceCapabilities offered = device.capabilities();
        if (a.type() == QpType.UD && !offered.unreliableDatagram()) {
            throw new VerbsException("provider '" + device.provider().name() + "' offers no UD queue pairs (device '"
                + device.name() + "' capabilities: unreliableDatagram=false); use RC, or a provider with UD such as 'soft'");
        }
        SoftSharedReceiveQueue srq = null;
        if (a.srq() != null) {
            if (!(a.srq() instanceof SoftSharedReceiveQueue s) || s.pd() != this) {
                throw new VerbsException("the SRQ belongs to another protection domain; create the QP and SRQ in the same one");
            }
            if (s.isClosed()) {
                throw new VerbsException("the SRQ is closed; create a new one");
            }
            srq = s;
        }
        DeviceCapabilities caps = device.capabilities();
        if (a.maxSendWr() > caps.maxQpWorkRequests() || a.maxReceiveWr() > caps.maxQpWorkRequests()) {
            throw new VerbsException("maxSendWr " + a.maxSendWr() + " / maxReceiveWr " + a.maxReceiveWr()
                + " exceed the device limit of " + caps.maxQpWorkRequests() + " work requests per queue");
        }
        if (a.maxInlineBytes() > caps.maxInlineBytes()) {
            throw new VerbsException("maxInlineBytes " + a.maxInlineBytes() + " exceeds the device limit of "
                + caps.maxInlineBytes() + " bytes");
        }
        SoftQueuePair qp = device.resources().createQp(this, a, srq);
        owned.add(qp);
        return qp;
    }

    private void checkCq(String which, CompletionQueue cq) {
        if (!(cq instanceof SoftCompletionQueue s) || s.device() != device) {
            throw new VerbsException("the " + which + " CQ belongs to another device; create it on '" + device.name() + "'");
        }
        if (s.isClosed()) {
            throw new VerbsException("the " + which + " CQ is closed; create a new one");
        }
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWorkRequests) {
        checkOpen("create a shared receive queue");
        if (!device.capabilities().sharedReceiveQueue()) {
            throw new VerbsException("provider '" + device.provider().name() + "' offers no shared receive queues (device '"
                + device.name() + "' capabilities: sharedReceiveQueue=false); post receives on each QP instead");
        }
        int max = device.capabilities().maxQpWorkRequests();
        if (maxWorkRequests < 1 || maxWorkRequests > max) {
            throw new VerbsException("maxWorkRequests must be in [1, " + max + "] but it was " + maxWorkRequests);
        }
        SoftSharedReceiveQueue srq = new SoftSharedReceiveQueue(this, maxWorkRequests);
        owned.add(srq);
        return srq;
    }

    @Override
    public AddressHandle createAddressHandle(Port port, PortAddress destination) {
        checkOpen("create an address handle");
        if (!(port instanceof SoftPort sp) || sp.device() != device) {
            throw new VerbsException("port " + port.address() + " is not a port of device '" + device.name() + "'");
        }
        SoftAddressHandle ah = new SoftAddressHandle(this, sp, device.attachment().resolve(destination));
        owned.add(ah);
        return ah;
    }

    void forget(Object o) {
        owned.remove(o);
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Object o : new ArrayList<>(owned)) {
            if (o instanceof QueuePair qp) {
                qp.close();
            }
        }
        for (Object o : new ArrayList<>(owned)) {
            if (o instanceof MemoryRegion mr) {
                mr.deregister();
            } else if (o instanceof SharedReceiveQueue srq) {
                srq.close();
            } else if (o instanceof AddressHandle ah) {
                ah.close();
            }
        }
        owned.clear();
        device.resources().forget(this);
    }
}
