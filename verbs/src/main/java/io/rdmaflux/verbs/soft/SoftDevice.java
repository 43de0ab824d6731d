package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A soft NIC: one {@link Device} with its ports, key table, QPs, CQs and the engine that runs them.
 *
 * <p>The engine ({@link #doWork(long)}) is a {@link ProgressAgent} run by the provider's thread or
 * by {@code provider.progress(nowNs)}; each pass is {@link DeviceEngine}'s (delivery of arrived and
 * held-back frames, transmission, ACKs, timers). What the device has open (protection domains, CQs,
 * regions, QPs and their QPNs) is kept by {@link DeviceResources}. This class is the device's face:
 * its identity, ports, counters, and the verbs and transport entry points, which hand over to those two.
 *
 * <p><b>Concurrency:</b> the setup API is thread-safe. Engine state is touched by the engine
 * thread only; see the package documentation.
 */
public final class SoftDevice implements Device, ProgressAgent {
    /** What every soft device supports. */
    public static final DeviceCapabilities CAPABILITIES = new DeviceCapabilities(
        1 << 16, 1 << 15, 16, 1 << 22, Integer.MAX_VALUE, 1L << 30, 1024, true, true, true, true, true);

    private final SoftProvider provider;
    private final String name;
    private final List<Port> ports;
    private final FrameTransport.Attachment attachment;
    private final FramePool framePool = new FramePool();
    final Scratch scratch = new Scratch();
    long udDropped;
    long rcRetransmits;
    long rcToUnknownQp;
    long rcNakRetransmits;
    long rcDuplicateRequests;
    long rcAtomicReplays;
    long rcSequenceNaks;
    long rcForeignFrames;
    long icrcDrops;
    long remoteAccessRefused;

    private final SoftKeyTable keys;
    final DeviceEngine engine;
    private final DeviceResources resources;
    /** The QPs an engine pass visits (doorbells rung, work outstanding); the engine's instance. */
    private final ActiveQueuePairs activeQps;
    /** UD QPs open; written by {@link DeviceResources} under its setup lock. */
    volatile int udQueuePairs;
    private volatile boolean closed;
    /** Set when {@link #close()} begins (before it deregisters the regions its protection domains hold). */
    private volatile boolean closing;

    SoftDevice(SoftProvider provider, String name, int portCount, java.util.function.IntFunction<RailConfig> railOfPort,
               SoftFabric fabric) {
        this.provider = provider;
        this.name = name;
        this.keys = new SoftKeyTable(name);
        this.attachment = fabric.transport().attach(this);
        this.engine = new DeviceEngine(this, attachment);
        this.activeQps = engine.activeQps;
        this.resources = new DeviceResources(this, engine, keys);
        List<Port> list = new ArrayList<>();
        for (int i = 1; i <= portCount; i++) {
            SoftPort p = new SoftPort(this, i, railOfPort.apply(i));
            list.add(p);
        }
        this.ports = List.copyOf(list);
        for (Port p : ports) {
            ((SoftPort) p).bound(attachment.bind((SoftPort) p));
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String roleName() {
        return "soft-nic-" + name;
    }

    @Override
    public List<Port> ports() {
        return ports;
    }

    /**
     * Sets every port of this device to {@code state}: {@link io.rdmaflux.verbs.PortState#DOWN} fails the whole
     * NIC (an HCA lost: its RC queue pairs' peers and its own see their work requests time out), while the
     * provider's other devices go on; {@link io.rdmaflux.verbs.PortState#ACTIVE} brings it back. Any thread.
     */
    public void setPortsState(io.rdmaflux.verbs.PortState state) {
        for (Port p : ports) {
            ((SoftPort) p).setState(state);
        }
    }

    /** Port {@code number} as a {@link SoftPort} (rail control: state, rail model). */
    public SoftPort softPort(int number) {
        return (SoftPort) port(number);
    }

    @Override
    public DeviceCapabilities capabilities() {
        return provider.capabilities();
    }

    SoftProvider provider() {
        return provider;
    }

    FrameTransport.Attachment attachment() {
        return attachment;
    }

    DeviceResources resources() {
        return resources;
    }

    /** UD datagrams this NIC dropped on receipt (no receive posted, wrong Q_Key, QP not ready). */
    public long udDatagramsDropped() {
        return udDropped;
    }

    /**
     * RC go-back-N retransmissions this NIC's requesters started because their ACK timer expired
     * (each rewinds to the oldest unacknowledged work request). Receiver-not-ready retries are not
     * counted. Written by the engine thread; a read from another thread may lag.
     */
    public long rcRetransmits() {
        return rcRetransmits;
    }

    /**
     * RC go-back-N retransmissions this NIC's requesters started without waiting for the ACK timer:
     * on a NAK - PSN sequence error from the responder, or on a READ response that shows an earlier
     * READ's response missing. Each rewinds to the oldest unacknowledged work request. Written by the
     * engine thread; a read from another thread may lag.
     */
    public long rcNakRetransmits() {
        return rcNakRetransmits;
    }

    /**
     * Duplicate RC requests (a PSN already accepted, after a retransmission or a duplicated frame) this
     * NIC's responders received: acknowledged again (a READ executed again), never placed or completed
     * twice. Written by the engine thread; a read from another thread may lag.
     */
    public long rcDuplicateRequests() {
        return rcDuplicateRequests;
    }

    /**
     * Duplicate atomic requests this NIC's responders answered from their saved results instead of
     * executing them again ({@link AtomicReplayCache}); engine-thread counter, read racily elsewhere.
     */
    public long rcAtomicReplays() {
        return rcAtomicReplays;
    }

    /**
     * NAKs - PSN sequence error this NIC's responders sent (a request after a gap in the PSNs). Written
     * by the engine thread; a read from another thread may lag.
     */
    public long rcSequenceNaksSent() {
        return rcSequenceNaks;
    }

    /**
     * RC frames (requests and responses) this NIC dropped on receipt because their destination QPN
     * names no open queue pair (closed, never created, or a stale endpoint). Written by the engine
     * thread; a read from another thread may lag.
     */
    public long rcFramesToUnknownQp() {
        return rcToUnknownQp;
    }

    /**
     * RC frames this NIC dropped because they came from another host than the one their queue pair is
     * connected to (a forged or misrouted frame naming a real QPN; {@link SoftPeerCheck}). Written by
     * the engine thread; a read from another thread may lag.
     */
    public long rcForeignFramesDropped() {
        return rcForeignFrames;
    }

    /** Frames whose ICRC check failed ({@link RailConfig#rcCorruptRate()}), dropped unexecuted; may lag. */
    public long icrcDrops() {
        return icrcDrops;
    }

    /**
     * RDMA WRITE and READ requests this NIC's responders refused with REM_ACCESS_ERR: an rkey that
     * names no region (stale, guessed), another protection domain, out of bounds, or without the
     * access right. Written by the engine thread; a read from another thread may lag.
     */
    public long remoteAccessRefused() {
        return remoteAccessRefused;
    }

    void checkOpen(String what) {
        if (closed) {
            throw new VerbsException("cannot " + what + ": device '" + name + "' is closed");
        }
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        checkOpen("allocate a protection domain");
        return resources.allocateProtectionDomain();
    }


    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        checkOpen("create a completion queue");
        return resources.createCompletionQueue(capacity);
    }

    // ---------------------------------------------------------------- key table

    /**
     * The valid region {@code rkey} names if the RC QP {@code qpn} may be targeted at it (same protection
     * domain, some remote right; bounds and the exact right are checked per request), else null. For a
     * transport handing a peer the region's key for one-sided operations of its own (see
     * {@link FrameTransport.Attachment#regionDeregistered}); any thread, the answer may be stale.
     */
    public @Nullable MemoryRegion remoteRegion(int qpn, int rkey) {
        SoftQueuePair qp = engine.lookupQp(qpn);
        SoftMemoryRegion mr = keys.lookup(rkey);
        if (qp == null || qp.isClosed() || mr == null || mr.rkey() != rkey || !mr.isValid()
            || mr.pd() != qp.softPd() || qp.type() != io.rdmaflux.verbs.QpType.RC
            || (mr.access() & (io.rdmaflux.verbs.Access.REMOTE_WRITE | io.rdmaflux.verbs.Access.REMOTE_READ)) == 0) {
            return null;
        }
        return mr;
    }

    /**
     * The route of the RC QP {@code qpn} to its connected peer, or null (no such QP, not connected yet, or not
     * RC). For a transport that handed a peer a region's key ({@link #remoteRegion}) and must tell whether
     * that peer is still reachable; any thread, the answer may be stale.
     */
    public @Nullable Route queuePairRoute(int qpn) {
        SoftQueuePair qp = engine.lookupQp(qpn);
        return qp == null || qp.type() != io.rdmaflux.verbs.QpType.RC ? null : qp.route();
    }

    @Nullable SoftMemoryRegion lookupLocal(int lkey) {
        return keys.lookup(lkey);
    }

    /** Key-table slots retired after 128 uses, so that a stale key never names a later region ({@link SoftKeyTable}). */
    public long memoryKeySlotsRetired() {
        return keys.retiredSlots();
    }

    @Nullable SoftMemoryRegion lookupRemote(int rkey) {
        return lookupLocal(rkey);
    }

    // ---------------------------------------------------------------- QPs

    /** Queue pairs open on this device. */
    public int queuePairCount() {
        return engine.qpList.length;
    }

    /**
     * UD queue pairs open on this device; any thread. A transport may poll its datagram sockets less
     * often while there are none.
     */
    public int udQueuePairCount() {
        return udQueuePairs;
    }

    // ---------------------------------------------------------------- frames

    /** A frame from this NIC's pool; engine thread only (transports use it for received frames). */
    public SoftFrame claimFrame() {
        SoftFrame f = framePool.claim();
        f.payloadCount = 0;
        f.hasImmediate = false;
        f.hasIcrc = false;
        f.payloadPlaced = false;
        f.sourceHost = null;
        return f;
    }

    /** Frames this NIC ever allocated; constant in steady state (no allocation per work request). */
    public int framesAllocated() {
        return framePool.created();
    }

    /**
     * Engine: hands an RC frame {@code port} sends (arrival time set) to the transport, through the
     * port's RC faults when its rail has any ({@link SoftPort#rcFaults()}, read after
     * {@link SoftPort#engineRail()}).
     */
    void transmitRc(SoftPort port, SoftFrame f, long nowNs) {
        RcFaults faults = port.rcFaults();
        if (faults == null) {
            attachment.transmit(f);
        } else {
            faults.transmit(f, nowNs, this);
        }
    }

    long monotoneArrival(SoftPort port, long arrivalNs) {
        return port.monotone(arrivalNs);
    }

    /**
     * Called by the transport, on this NIC's engine thread, for each frame that arrived. A frame due
     * later than {@code nowNs} is held until then (the NIC then owns it and releases it itself).
     *
     * @return true when the frame was processed and the transport must {@link SoftFrame#release()}
     *     it (it may batch releases); false when the NIC kept it
     */
    public boolean onFrameArrived(SoftFrame frame, long nowNs) {
        return engine.onFrameArrived(frame, nowNs);
    }

    /**
     * Called by a transport, on this NIC's engine thread, when {@code route} can no longer carry
     * frames (its connection broke for good, e.g. the peer's TCP stream closed or reset). Every RC
     * queue pair bound to the route moves to ERROR in the next engine pass: its oldest
     * unacknowledged send (if any) completes with RETRY_EXC_ERR, as if its retries were exhausted,
     * later sends and all posted receives with WR_FLUSH_ERR. This reaches QPs that only receive,
     * which have no retry timer to find out. Queue pairs on other routes are untouched.
     *
     * @param reason why, for the error completion's detail
     */
    public void routeBroken(Route route, String reason) {
        engine.routeBroken(route, reason);
    }

    ActiveQueuePairs activeQueuePairs() {
        return activeQps;
    }

    // ---------------------------------------------------------------- engine

    @Override
    public int doWork(long nowNs) {
        return engine.doWork(nowNs);
    }

    /** Engine thread, between passes: transmits the work requests posted since the last pass (see {@link DeviceEngine#transmitPosted}). */
    int transmitPosted(long nowNs) {
        return engine.transmitPosted(nowNs);
    }

    /**
     * After a pass that did no work (engine thread): waits in the transport for frames, for at most
     * {@code timeoutNs} and never past the arrival time of the first held-back frame or a QP's next
     * retransmission or RNR timer (see
     * {@link io.rdmaflux.verbs.RdmaProvider#awaitWork(long)}).
     *
     * @return true if it waited, false if it returned at once (cannot wait, or a held frame is due sooner
     *     than the transport can time a wait)
     */
    boolean awaitWork(long nowNs, long timeoutNs) {
        return engine.awaitWork(nowNs, timeoutNs);
    }

    /** Ends an {@link #awaitWork} in progress (any thread). */
    void wakeup() {
        attachment.wakeup();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closing = true;
        resources.closeAll();
        closed = true;
        attachment.close();
        engine.releaseDelayed();
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Whether this device is closing or closed: its engine no longer runs (the provider stops it before
     * closing its devices), so a transport's {@link FrameTransport.Attachment#regionDeregistered} must not
     * wait for it. Any thread.
     */
    public boolean isClosing() {
        return closing || closed;
    }

    @Override
    public String toString() {
        return "SoftDevice{" + name + ", ports=" + ports.size() + ", qps=" + engine.qpList.length + "}";
    }

    /** RDMA WRITEs this NIC placed torn ({@link RailConfig#tornWrites()}); engine-written, may be stale. */
    public long tornWritesPlaced() {
        return engine.tornWrites();
    }

    /** Engine-thread scratch scatter list (no allocation per work request). */
    static final class Scratch {
        // Not cleared after use: at most 16 stale buffer references, overwritten by the next copy.
        final ByteBuffer[] buffers = new ByteBuffer[16];
        final long[] addresses = new long[16];
        final int[] lengths = new int[16];
        long total;
    }
}
