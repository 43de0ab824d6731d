package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;

/**
 * A soft NIC: one {@link Device} with its ports, key table, QPs, CQs and the engine that runs them.
 *
 * <p>The engine ({@link #doWork(long)}) is a {@link ProgressAgent} run by the provider's thread or
 * by {@code provider.progress(nowNs)}. Each pass it delivers frames whose arrival time has come
 * (held back in a heap when a rail has latency or shaping), transmits RC work requests posted since
 * the last pass (so they leave before the transport's poll, which on the IP fabric is a system
 * call), takes new frames from the {@link FrameTransport}, runs every QP's requester (transmit, timers, completions, flush), sends
 * the cumulative ACKs its responders owe, and moves the QPs of an overrun CQ to ERROR.
 *
 * <p><b>Concurrency:</b> the setup API is thread-safe. Engine state is touched by the engine
 * thread only; see the package documentation.
 */
public final class SoftDevice implements Device, ProgressAgent {
    /** What every soft device supports. */
    public static final DeviceCapabilities CAPABILITIES = new DeviceCapabilities(
        1 << 16, 1 << 15, 16, 1 << 22, Integer.MAX_VALUE, 1L << 30, 1024, true, true, true, true, true);

    private static final int POLL_LIMIT = 4096;

    private final SoftProvider provider;
    private final String name;
    private final List<Port> ports;
    private final FrameTransport.Attachment attachment;
    private final FramePool framePool = new FramePool();
    private final FrameHeap delayed = new FrameHeap();
    final Scratch scratch = new Scratch();
    long udDropped;
    long rcRetransmits;
    long rcToUnknownQp;
    long rcNakRetransmits;
    long rcDuplicateRequests;
    long rcAtomicReplays;
    long rcSequenceNaks;
    long rcForeignFrames;
    private long icrcDrops;
    long remoteAccessRefused;
    private long arrivalSeq;

    private final Object setupLock = new Object();
    private final SoftKeyTable keys;
    private volatile SoftQueuePair[] qpList = new SoftQueuePair[0];
    /** Engine: some CQ of this device overran since the last pass ({@link SoftCompletionQueue#overrun}). */
    boolean cqOverran;
    /** The QPs an engine pass visits (doorbells rung, work outstanding). */
    private final ActiveQueuePairs activeQps = new ActiveQueuePairs(() -> qpList);
    private volatile int udQueuePairs;
    private volatile @Nullable SoftQueuePair[] qpTable = new SoftQueuePair[16];
    private volatile SoftCompletionQueue[] cqList = new SoftCompletionQueue[0];
    private final Set<SoftProtectionDomain> pds = ConcurrentHashMap.newKeySet();

    private SoftResponder[] ackQueue = new SoftResponder[16];
    private int ackCount;
    private volatile boolean closed;
    /** Set when {@link #close()} begins (before it deregisters the regions its protection domains hold). */
    private volatile boolean closing;

    SoftDevice(SoftProvider provider, String name, int portCount, java.util.function.IntFunction<RailConfig> railOfPort,
               SoftFabric fabric) {
        this.provider = provider;
        this.name = name;
        this.keys = new SoftKeyTable(name);
        this.attachment = fabric.transport().attach(this);
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
        SoftProtectionDomain pd = new SoftProtectionDomain(this);
        pds.add(pd);
        return pd;
    }

    void forget(SoftProtectionDomain pd) {
        pds.remove(pd);
    }

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        checkOpen("create a completion queue");
        if (capacity < 1 || capacity > CAPABILITIES.maxCqEntries()) {
            throw new VerbsException("CQ capacity must be in [1, " + CAPABILITIES.maxCqEntries() + "] but it was " + capacity);
        }
        SoftCompletionQueue cq = new SoftCompletionQueue(this, capacity);
        synchronized (setupLock) {
            SoftCompletionQueue[] a = Arrays.copyOf(cqList, cqList.length + 1);
            a[a.length - 1] = cq;
            cqList = a;
        }
        SoftResources.LIVE_COMPLETION_QUEUES.incrementAndGet();
        return cq;
    }

    void removeCq(SoftCompletionQueue cq) {
        synchronized (setupLock) {
            cqList = Arrays.stream(cqList).filter(c -> c != cq).toArray(SoftCompletionQueue[]::new);
        }
    }

    // ---------------------------------------------------------------- key table

    SoftMemoryRegion addRegion(SoftProtectionDomain pd, ByteBuffer base, int access, boolean allocated) {
        synchronized (setupLock) {
            return keys.add(pd, base, access, allocated);
        }
    }

    /** Drops {@code mr}'s keys and tells the transport; {@code async}: never blocks, the stage says when peers are out of reach. */
    CompletionStage<Void> removeRegion(SoftMemoryRegion mr, boolean async) {
        synchronized (setupLock) {
            keys.remove(mr);
        }
        if (async) {
            return attachment.regionDeregisteredAsync(mr);
        }
        attachment.regionDeregistered(mr);
        return CompletableFuture.completedFuture(null);
    }

    /**
     * The valid region {@code rkey} names if the RC QP {@code qpn} may be targeted at it (same protection
     * domain, some remote right; bounds and the exact right are checked per request), else null. For a
     * transport handing a peer the region's key for one-sided operations of its own (see
     * {@link FrameTransport.Attachment#regionDeregistered}); any thread, the answer may be stale.
     */
    public @Nullable MemoryRegion remoteRegion(int qpn, int rkey) {
        SoftQueuePair qp = lookupQp(qpn);
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
        SoftQueuePair qp = lookupQp(qpn);
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

    SoftQueuePair createQp(SoftProtectionDomain pd, QpInitAttributes a, @Nullable SoftSharedReceiveQueue srq) {
        synchronized (setupLock) {
            SoftQueuePair[] table = qpTable;
            int qpn = -1;
            for (int i = 1; i < table.length; i++) {
                if (table[i] == null) {
                    qpn = i;
                    break;
                }
            }
            if (qpn < 0) {
                if (table.length > CAPABILITIES.maxQueuePairs()) {
                    throw new VerbsException("device '" + name + "' already has " + CAPABILITIES.maxQueuePairs()
                        + " queue pairs; close some");
                }
                qpn = table.length;
                table = Arrays.copyOf(table, table.length * 2);
            }
            SoftQueuePair qp = new SoftQueuePair(this, pd, a, srq, qpn);
            table[qpn] = qp;
            qpTable = table;
            SoftQueuePair[] list = Arrays.copyOf(qpList, qpList.length + 1);
            list[list.length - 1] = qp;
            qpList = list;
            if (qp.type() == io.rdmaflux.verbs.QpType.UD) {
                udQueuePairs++;
            }
            SoftResources.LIVE_QUEUE_PAIRS.incrementAndGet();
            return qp;
        }
    }

    /** Destroyed RC QPs whose routes the engine has yet to release ({@link #releaseRoutes}); any thread adds. */
    private final ConcurrentLinkedQueue<SoftQueuePair> routesToRelease = new ConcurrentLinkedQueue<>();

    void removeQp(SoftQueuePair qp) {
        if (qp.type() == io.rdmaflux.verbs.QpType.RC && qp.route() != null) {
            routesToRelease.add(qp);
            // an engine waiting in the transport releases the route now rather than at its next wake
            attachment.wakeup();
        }
        synchronized (setupLock) {
            SoftQueuePair[] table = qpTable;
            if (table[qp.qpn] == qp) {
                table[qp.qpn] = null;
                qpTable = table;
            }
            int before = qpList.length;
            qpList = Arrays.stream(qpList).filter(q -> q != qp).toArray(SoftQueuePair[]::new);
            if (qpList.length < before && qp.type() == io.rdmaflux.verbs.QpType.UD) {
                udQueuePairs--;
            }
        }
    }

    private @Nullable SoftQueuePair lookupQp(int qpn) {
        SoftQueuePair[] table = qpTable;
        return qpn > 0 && qpn < table.length ? table[qpn] : null;
    }

    /** Queue pairs open on this device. */
    public int queuePairCount() {
        return qpList.length;
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
        if (frame.deliverAtNs - nowNs > 0 || !delayed.isEmpty()) {
            frame.arrivalSeq = arrivalSeq++;
            delayed.add(frame);
            if (frame.deliverAtNs - nowNs <= 0) {
                drainDelayed(nowNs);
            }
            return false;
        }
        dispatch(frame, nowNs);
        return true;
    }

    private int drainDelayed(long nowNs) {
        int n = 0;
        SoftFrame f;
        while ((f = delayed.peek()) != null && f.deliverAtNs - nowNs <= 0) {
            delayed.poll();
            dispatch(f, nowNs);
            f.release();
            n++;
        }
        return n;
    }

    private void dispatch(SoftFrame f, long nowNs) {
        boolean icrcFails = f.hasIcrc && !Icrc.matches(f);
        SoftQueuePair qp = icrcFails ? null : lookupQp(f.destinationQpn);
        if (icrcFails) {
            icrcDrops++; // as an RC NIC does: the requester's retransmission recovers it
        } else if (qp == null || qp.isClosed()) {
            if (f.type == FrameType.UD_SEND) {
                udDropped++;
            } else {
                rcToUnknownQp++;
            }
        } else if (f.type != FrameType.UD_SEND && !SoftPeerCheck.fromConnectedPeer(qp, f)) {
            rcForeignFrames++;
        } else if (qp.portUp()) {
            // identity tests rather than an enum switch (no ordinal-map load per frame)
            FrameType t = f.type;
            if (t == FrameType.SEND || t == FrameType.RDMA_WRITE || t == FrameType.RDMA_READ_REQUEST
                || t == FrameType.ATOMIC_FETCH_ADD || t == FrameType.ATOMIC_CMP_SWAP) {
                qp.responder.onRequest(f, nowNs);
            } else if (t == FrameType.UD_SEND) {
                qp.responder.onDatagram(f);
            } else {
                qp.onResponse(f, nowNs);
            }
        } else if (f.type == FrameType.UD_SEND) {
            udDropped++;
        }
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
        for (SoftQueuePair qp : qpList) {
            if (qp.route() == route && !qp.isClosed()) {
                qp.routeBroken(reason);
            }
        }
    }

    ActiveQueuePairs activeQueuePairs() {
        return activeQps;
    }

    void queueAck(SoftResponder qp) {
        if (qp.ackQueued) {
            return;
        }
        qp.ackQueued = true;
        if (ackCount == ackQueue.length) {
            ackQueue = Arrays.copyOf(ackQueue, ackCount * 2);
        }
        ackQueue[ackCount++] = qp;
    }

    // ---------------------------------------------------------------- engine

    @Override
    public int doWork(long nowNs) {
        if (closed) {
            return 0;
        }
        applyTornPieces();
        int work = routesToRelease.isEmpty() ? 0 : releaseRoutes();
        work += delayed.isEmpty() ? 0 : drainDelayed(nowNs);
        SoftQueuePair[] list = activeQps.take();
        int n = activeQps.count();
        int rung = 0;
        for (int i = 0; i < n; i++) {
            rung += list[i].transmitPosted(nowNs);
        }
        if (rung > 0) {
            attachment.flush();
            work += rung;
        }
        work += attachment.poll(nowNs, POLL_LIMIT);
        work += flushAcks(nowNs);
        // the poll may have activated more (a route broken, a NAK): visit those too
        list = activeQps.take();
        n = activeQps.count();
        for (int i = 0; i < n; i++) {
            work += list[i].doSendWork(nowNs);
        }
        work += flushAcks(nowNs);
        attachment.flush();
        activeQps.retire();
        if (cqOverran) {
            // engine thread only sets it (SoftCompletionQueue.hasRoom): no walk of every CQ per pass
            cqOverran = false;
            work += failOverrunQueuePairs();
        }
        return work;
    }

    /** Engine: moves every QP of each CQ that overran to ERROR. */
    private int failOverrunQueuePairs() {
        int work = 0;
        for (SoftCompletionQueue cq : cqList) {
            if (cq.overrun) {
                cq.overrun = false;
                for (SoftQueuePair qp : qpList) {
                    if (qp.usesCq(cq)) {
                        qp.cqOverrun();
                    }
                }
                work++;
            }
        }
        return work;
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
        if (closed) {
            return false;
        }
        long waitNs = timeoutNs;
        SoftFrame next = delayed.peek();
        if (next != null) {
            long dueInNs = next.deliverAtNs - nowNs;
            if (dueInNs <= 0) {
                return false;
            }
            waitNs = Math.min(waitNs, dueInNs);
        }
        SoftQueuePair[] active = activeQps.take();
        for (int i = 0, n = activeQps.count(); i < n; i++) {
            SoftQueuePair qp = active[i];
            // a retransmission or RNR timer due sooner ends the wait in time for its pass (only an active QP
            // has one running)
            long dueInNs = qp.timerDueInNs(nowNs);
            if (dueInNs <= 0) {
                return false;
            }
            waitNs = Math.min(waitNs, dueInNs);
        }
        return attachment.awaitWork(waitNs);
    }

    /** Ends an {@link #awaitWork} in progress (any thread). */
    void wakeup() {
        attachment.wakeup();
    }

    /**
     * Engine, at the start of a pass (before anything is transmitted): tells the transport the routes of
     * RC QPs destroyed since ({@link FrameTransport.Attachment#releaseRoute}).
     */
    private int releaseRoutes() {
        int n = 0;
        SoftQueuePair qp;
        while ((qp = routesToRelease.poll()) != null) {
            Route r = qp.route();
            if (r != null) {
                attachment.releaseRoute(r, qp.qpn, qp.remoteQpn());
                n++;
            }
        }
        return n;
    }

    private int flushAcks(long nowNs) {
        int n = ackCount;
        for (int i = 0; i < n; i++) {
            SoftResponder r = ackQueue[i];
            ackQueue[i] = null;
            r.flushAck(nowNs);
        }
        ackCount = 0;
        return n;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closing = true;
        for (SoftProtectionDomain pd : new ArrayList<>(pds)) {
            pd.close();
        }
        for (SoftCompletionQueue cq : cqList) {
            cq.close();
        }
        closed = true;
        attachment.close();
        SoftFrame f;
        while ((f = delayed.poll()) != null) {
            f.release();
        }
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
        return "SoftDevice{" + name + ", ports=" + ports.size() + ", qps=" + qpList.length + "}";
    }

    /** Engine-thread scratch scatter list (no allocation per work request). */
    /** First halves of torn WRITEs not yet placed (engine thread only): target, address, bytes. */
    private final java.util.ArrayDeque<Object[]> tornPieces = new java.util.ArrayDeque<>();
    private long tornWrites;

    /** Engine: holds the first half of a torn WRITE until {@link #applyTornPieces()}. */
    void holdTornPiece(SoftMemoryRegion target, long address, byte[] bytes) {
        tornPieces.add(new Object[] {target, address, bytes});
        tornWrites++;
    }

    /** Engine: places the held halves of torn WRITEs (their regions are kept reachable by the entries). */
    void applyTornPieces() {
        Object[] p;
        while ((p = tornPieces.poll()) != null) {
            SoftMemoryRegion mr = (SoftMemoryRegion) p[0];
            synchronized (mr) {
                // deregistration clears validity under this lock before it frees the memory
                if (mr.isValid()) {
                    NativeMemory.putBytes((byte[]) p[2], (long) p[1]);
                }
            }
        }
    }

    /** RDMA WRITEs this NIC placed torn ({@link RailConfig#tornWrites()}); engine-written, may be stale. */
    public long tornWritesPlaced() {
        return tornWrites;
    }

    static final class Scratch {
        // Not cleared after use: at most 16 stale buffer references, overwritten by the next copy.
        final ByteBuffer[] buffers = new ByteBuffer[16];
        final long[] addresses = new long[16];
        final int[] lengths = new int[16];
        long total;
    }
}
