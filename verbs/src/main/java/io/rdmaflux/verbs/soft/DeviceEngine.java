package io.rdmaflux.verbs.soft;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;

/**
 * The engine of one {@link SoftDevice}: the pass {@link SoftDevice#doWork(long)} runs and the frames it
 * delivers.
 *
 * <p>Each pass it delivers frames whose arrival time has come (held back in a heap when a rail has
 * latency or shaping), transmits RC work requests posted since the last pass (so they leave before the
 * transport's poll, which on the IP fabric is a system call), takes new frames from the
 * {@link FrameTransport}, runs every QP's requester (transmit, timers, completions, flush), sends the
 * cumulative ACKs its responders owe, and moves the QPs of an overrun CQ to ERROR. It owns what that pass
 * reads per frame and per pass: the QPN table frames are dispatched by, the held-back frames, the ACK
 * queue, the routes of destroyed QPs still to release, and the first halves of torn WRITEs.
 *
 * <p><b>Concurrency:</b> engine thread only, except {@link #releaseRouteOf} (any thread) and the QP
 * table ({@link #qpTable}, {@link #qpList}), which {@link DeviceResources} replaces under its setup lock
 * and anyone may read.
 */
final class DeviceEngine {
    private static final int POLL_LIMIT = 4096;

    private final SoftDevice device;
    private final FrameTransport.Attachment attachment;
    private final FrameHeap delayed = new FrameHeap();
    private long arrivalSeq;

    /** QPs by QPN (slot 0 unused); replaced, never changed in place, by {@link DeviceResources}. */
    volatile @Nullable SoftQueuePair[] qpTable = new SoftQueuePair[16];
    /** Every open QP; replaced, never changed in place, by {@link DeviceResources}. */
    volatile SoftQueuePair[] qpList = new SoftQueuePair[0];
    /** The QPs a pass visits (doorbells rung, work outstanding); the device holds the same instance. */
    final ActiveQueuePairs activeQps = new ActiveQueuePairs(() -> qpList);
    /** Some CQ of this device overran since the last pass ({@link SoftCompletionQueue#overrun}). */
    boolean cqOverran;

    private SoftResponder[] ackQueue = new SoftResponder[16];
    private int ackCount;
    /** Destroyed RC QPs whose routes the engine has yet to release ({@link #releaseRoutes}); any thread adds. */
    private final ConcurrentLinkedQueue<SoftQueuePair> routesToRelease = new ConcurrentLinkedQueue<>();
    /** First halves of torn WRITEs not yet placed: target, address, bytes. */
    private final ArrayDeque<Object[]> tornPieces = new ArrayDeque<>();
    private long tornWrites;

    DeviceEngine(SoftDevice device, FrameTransport.Attachment attachment) {
        this.device = device;
        this.attachment = attachment;
    }

    // ---------------------------------------------------------------- the pass

    /**
     * Between passes (engine thread): hands the QPs whose doorbells rang their posted work requests now and
     * writes what they framed, as the start of {@link #doWork} does, without polling the transport or running
     * timers (see {@link io.rdmaflux.verbs.RdmaProvider#transmitPosted}). The QPs taken in stay active until
     * the next pass retires them.
     *
     * @return work requests transmitted
     */
    int transmitPosted(long nowNs) {
        return device.isClosed() ? 0 : transmitRung(nowNs);
    }

    /** The QPs whose doorbells rang transmit their posted work requests; what they framed is written. @return WRs */
    private int transmitRung(long nowNs) {
        SoftQueuePair[] list = activeQps.take();
        int n = activeQps.count();
        int rung = 0;
        for (int i = 0; i < n; i++) {
            rung += list[i].transmitPosted(nowNs);
        }
        if (rung > 0) {
            attachment.flush();
        }
        return rung;
    }

    int doWork(long nowNs) {
        if (device.isClosed()) {
            return 0;
        }
        applyTornPieces();
        int work = routesToRelease.isEmpty() ? 0 : releaseRoutes();
        work += delayed.isEmpty() ? 0 : drainDelayed(nowNs);
        work += transmitRung(nowNs);
        work += attachment.poll(nowNs, POLL_LIMIT);
        work += flushAcks(nowNs);
        // the poll may have activated more (a route broken, a NAK): visit those too
        SoftQueuePair[] list = activeQps.take();
        int n = activeQps.count();
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

    /** Moves every QP of each CQ that overran to ERROR. */
    private int failOverrunQueuePairs() {
        int work = 0;
        for (SoftCompletionQueue cq : device.resources().completionQueues()) {
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

    /** See {@link SoftDevice#awaitWork(long, long)}. */
    boolean awaitWork(long nowNs, long timeoutNs) {
        if (device.isClosed()) {
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

    // ---------------------------------------------------------------- frames

    /** See {@link SoftDevice#onFrameArrived(SoftFrame, long)}. */
    boolean onFrameArrived(SoftFrame frame, long nowNs) {
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
            device.icrcDrops++; // as an RC NIC does: the requester's retransmission recovers it
        } else if (qp == null || qp.isClosed()) {
            if (f.type == FrameType.UD_SEND) {
                device.udDropped++;
            } else {
                device.rcToUnknownQp++;
            }
        } else if (f.type != FrameType.UD_SEND && !SoftPeerCheck.fromConnectedPeer(qp, f)) {
            device.rcForeignFrames++;
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
            device.udDropped++;
        }
    }

    @Nullable SoftQueuePair lookupQp(int qpn) {
        SoftQueuePair[] table = qpTable;
        return qpn > 0 && qpn < table.length ? table[qpn] : null;
    }

    /** Releases the frames still held back (the device is closing). */
    void releaseDelayed() {
        SoftFrame f;
        while ((f = delayed.poll()) != null) {
            f.release();
        }
    }

    // ---------------------------------------------------------------- ACKs and routes

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

    /** See {@link SoftDevice#routeBroken(Route, String)}. */
    void routeBroken(Route route, String reason) {
        for (SoftQueuePair qp : qpList) {
            if (qp.route() == route && !qp.isClosed()) {
                qp.routeBroken(reason);
            }
        }
    }

    /** Any thread: the route of the destroyed RC QP {@code qp} is released at the start of the next pass. */
    void releaseRouteOf(SoftQueuePair qp) {
        routesToRelease.add(qp);
        // an engine waiting in the transport releases the route now rather than at its next wake
        attachment.wakeup();
    }

    /**
     * At the start of a pass (before anything is transmitted): tells the transport the routes of RC QPs
     * destroyed since ({@link FrameTransport.Attachment#releaseRoute}).
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

    // ---------------------------------------------------------------- torn WRITEs

    /** Holds the first half of a torn WRITE until {@link #applyTornPieces()}. */
    void holdTornPiece(SoftMemoryRegion target, long address, byte[] bytes) {
        tornPieces.add(new Object[] {target, address, bytes});
        tornWrites++;
    }

    /** Places the held halves of torn WRITEs (their regions are kept reachable by the entries). */
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

    /** RDMA WRITEs placed torn; engine-written, may be stale. */
    long tornWrites() {
        return tornWrites;
    }
}
