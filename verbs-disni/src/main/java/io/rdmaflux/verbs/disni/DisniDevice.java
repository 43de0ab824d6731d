package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.VerbsException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@code disni} device: the RDMA NIC that {@code rdma_cm} reaches at one IP address. Opened by
 * binding an anchor CM id to that address ({@code rdma_bind_addr}) and taking its {@code ibv_context};
 * owns one native CQ ({@link DeviceCompletions}) that feeds every SPI completion queue created here.
 *
 * <p><b>Capabilities</b> are fixed, not queried (DiSNI has no {@code ibv_query_device}): RC only, no UD,
 * no SRQ, RDMA READ yes, atomics no; 16 SGEs; regions up to 2^31-1 bytes (DiSNI registers with an
 * {@code int} length); messages up to 1 GiB; inline up to the {@code maxInline} option.
 *
 * <p><b>Concurrency:</b> thread-safe.
 */
final class DisniDevice implements Device {
    /** Receives' native wr_ids carry this bit; sends' are sequence numbers below it. */
    static final long RECV_TAG = 1L << 63;

    private final DisniProvider provider;
    private final String name;
    private final String ip;
    private final RdmaSeam.CmId anchor;
    private final RdmaSeam.Context context;
    private final DisniPort port;
    private final DeviceCapabilities capabilities;
    private final DeviceCompletions completions;
    private final List<DisniProtectionDomain> pds = new ArrayList<>();
    private final List<DisniCompletionQueue> cqs = new ArrayList<>();
    // read on every drain without a lock or a copy
    private volatile DisniCompletionQueue[] cqSnapshot = new DisniCompletionQueue[0];
    private final List<DisniQueuePair> qps = new ArrayList<>();
    private volatile DisniQueuePair[] qpSnapshot = new DisniQueuePair[0];
    private final AtomicInteger nextQpn = new AtomicInteger(0x100);
    private int reservedCqEntries;
    private boolean closed;

    DisniDevice(DisniProvider provider, int index, InetAddress address) {
        this.provider = provider;
        this.name = "disni" + index;
        this.ip = address.getHostAddress();
        DisniOptions o = provider.options();
        this.anchor = provider.cm().createId();
        try {
            anchor.bindAddr(new InetSocketAddress(address, 0));
            this.context = anchor.context();
            this.completions = new DeviceCompletions(this, context.createCq(o.cqEntries()), o.cqEntries());
        } catch (IOException e) {
            CmEvents.destroyQuietly(anchor);
            throw new VerbsException("cannot open the RDMA device at " + ip + " (rdma_bind_addr / ibv_create_cq): " + e.getMessage()
                + "; is " + ip + " the IPoIB or RoCE address of an RDMA NIC (ibv_devices, rdma link show)?", e);
        }
        this.port = new DisniPort(this, ip, o);
        this.capabilities = new DeviceCapabilities(1 << 16, 16384, 16, 1 << 22, Integer.MAX_VALUE, 1L << 30,
            o.maxInlineBytes(), false, false, true, false);
    }

    DisniProvider provider() {
        return provider;
    }

    RdmaSeam.Context context() {
        return context;
    }

    DeviceCompletions completions() {
        return completions;
    }

    /** The IP address rdma_cm reaches this device at. */
    String ip() {
        return ip;
    }

    /** A fresh QP number (the SPI's; the native one is known only once the CM created the QP). */
    int nextQpNumber() {
        return nextQpn.getAndIncrement() & 0xFFFFFF;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<Port> ports() {
        return List.of(port);
    }

    DisniPort disniPort() {
        return port;
    }

    @Override
    public DeviceCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        synchronized (this) {
            checkOpen();
        }
        RdmaSeam.Pd pd;
        try {
            pd = context.allocPd();
        } catch (IOException e) {
            throw new VerbsException("ibv_alloc_pd failed on " + name + ": " + e.getMessage(), e);
        }
        DisniProtectionDomain d = new DisniProtectionDomain(this, pd);
        synchronized (this) {
            pds.add(d);
        }
        return d;
    }

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        if (capacity < 1 || capacity > capabilities.maxCqEntries()) {
            throw new VerbsException("completion queue capacity must be in [1, " + capabilities.maxCqEntries() + "] but it was " + capacity);
        }
        DisniCompletionQueue cq = new DisniCompletionQueue(this, capacity);
        synchronized (this) {
            checkOpen();
            cqs.add(cq);
            cqSnapshot = cqs.toArray(new DisniCompletionQueue[0]);
        }
        return cq;
    }

    /**
     * Reserves native CQ entries for a QP's send and receive queues.
     *
     * @throws VerbsException when the device's one CQ could overflow; the message says which option to raise
     */
    synchronized void reserveCqEntries(int entries) {
        int total = completions.entries();
        if (reservedCqEntries + entries > total) {
            throw new VerbsException("the QPs of " + name + " would have " + (reservedCqEntries + entries)
                + " work requests outstanding but its CQ holds " + total + "; lower maxSendWr/maxReceiveWr or open the provider "
                + "with cqEntries=" + Integer.highestOneBit(reservedCqEntries + entries) * 2);
        }
        reservedCqEntries += entries;
    }

    synchronized void releaseCqEntries(int entries) {
        reservedCqEntries -= entries;
    }

    synchronized void add(DisniQueuePair qp) {
        qps.add(qp);
        qpSnapshot = qps.toArray(new DisniQueuePair[0]);
    }

    synchronized void forget(DisniQueuePair qp) {
        qps.remove(qp);
        qpSnapshot = qps.toArray(new DisniQueuePair[0]);
    }

    /** The live QPs of this device (a snapshot; do not modify). */
    DisniQueuePair[] queuePairs() {
        return qpSnapshot;
    }

    synchronized void forget(DisniProtectionDomain pd) {
        pds.remove(pd);
    }

    synchronized void forget(DisniCompletionQueue cq) {
        cqs.remove(cq);
        cqSnapshot = cqs.toArray(new DisniCompletionQueue[0]);
    }

    /** The SPI completion queues of this device (a snapshot; do not modify). */
    DisniCompletionQueue[] completionQueues() {
        return cqSnapshot;
    }

    private void checkOpen() {
        if (closed) {
            throw new VerbsException("device " + name + " is closed");
        }
    }

    @Override
    public void close() {
        List<DisniProtectionDomain> p;
        List<DisniCompletionQueue> c;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            p = List.copyOf(pds);
            c = List.copyOf(cqs);
        }
        for (DisniProtectionDomain pd : p) {
            pd.close();
        }
        for (DisniCompletionQueue cq : c) {
            cq.close();
        }
        completions.close();
        synchronized (provider.cm().lock) {
            CmEvents.destroyQuietly(anchor);
        }
    }

    @Override
    public String toString() {
        return "device{" + name + "@" + ip + "}";
    }
}
