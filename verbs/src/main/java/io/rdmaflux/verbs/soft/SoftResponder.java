package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import org.jspecify.annotations.Nullable;

/**
 * The receiving side of a {@link SoftQueuePair}, run by its NIC's engine: the RC responder and the
 * UD receiver.
 *
 * <h2>RC responder</h2>
 * The responder side of the InfiniBand reliable connection (IBA Vol. 1, chapter 9.7, reliable
 * service), one PSN per message:
 * <ul>
 *   <li><b>Expected PSN:</b> only the request carrying it is executed; each one executed advances it
 *       by one (24-bit, wrapping).</li>
 *   <li><b>Duplicate</b> (a PSN before the expected one: a requester retransmission, or a frame the
 *       wire delivered twice): SEND and RDMA WRITE are not executed again (no second receive
 *       completion, no second placement) but acknowledged again with the cumulative ACK of the last
 *       PSN executed; an RDMA READ is executed again (reads have no side effect) and answered with a
 *       new READ response; an atomic is <b>not</b> executed again but answered with the result its
 *       execution returned, from the {@link AtomicReplayCache} (atomic replay), or dropped if that result
 *       is no longer kept. Counted in {@link SoftDevice#rcDuplicateRequests()}.</li>
 *   <li><b>Out of sequence</b> (a PSN after the expected one: an earlier request was lost or
 *       overtaken): not executed; the responder answers one NAK - PSN sequence error
 *       ({@link FrameType#SEQUENCE_NAK}) carrying the expected PSN, and silently drops further
 *       out-of-sequence requests until the expected PSN arrives, so one gap costs one NAK and the
 *       requester goes back N once. After an RNR NAK the same holds: requests behind the refused one
 *       are dropped silently until it is retried.</li>
 * </ul>
 * SEND consumes the oldest posted receive (the QP's own queue or its SRQ) or answers
 * receiver-not-ready (RNR NAK); RDMA WRITE checks rkey, bounds, protection domain and REMOTE_WRITE,
 * RDMA READ the same with REMOTE_READ, an atomic the same with REMOTE_ATOMIC (and an 8-byte aligned
 * address, else REM_INV_REQ_ERR) before it runs on the memory ({@link SoftAtomics}) and answers the
 * original value, and answers REM_ACCESS_ERR otherwise; RDMA_WRITE_WITH_IMM
 * also consumes a receive. A receive too small for a SEND completes with LOC_LEN_ERR and the
 * requester gets REM_INV_REQ_ERR; a receive with a bad lkey completes with LOC_PROT_ERR and the
 * requester gets REM_OP_ERR. A responder-side error moves the QP to ERROR too. Accepted requests
 * are acknowledged cumulatively: one ACK per QP per engine pass ({@link SoftDevice}), sent early
 * when a NAK or READ response must follow it in order.
 *
 * <h2>UD receiver</h2>
 * A datagram is dropped silently when no receive is posted, the Q_Key differs, or the QP is not
 * ready (counted in {@link SoftDevice#udDatagramsDropped()}); otherwise it completes a receive with
 * the source QPN.
 */
final class SoftResponder {
    private final SoftQueuePair qp;
    private final SoftDevice device;
    /** The device's engine (its ACK queue and torn WRITEs), held here so a request reaches it in one step. */
    private final DeviceEngine engine;
    private final SoftProtectionDomain pd;
    private final SoftPort port;
    private final SoftCompletionQueue receiveCq;
    private final @Nullable ReceiveRing ring;
    private final int qpn;
    private int expectedPsn;
    private int ackPsn;
    /** A NAK (sequence error or RNR) went out for {@link #expectedPsn}: drop later PSNs silently until it arrives. */
    private boolean nakOutstanding;
    /** Results of the latest atomics, for duplicates. */
    private final AtomicReplayCache atomicResults = new AtomicReplayCache();
    /** Whether this responder sits in the device's ACK queue (engine only). */
    boolean ackQueued;

    SoftResponder(SoftQueuePair qp, SoftDevice device, SoftProtectionDomain pd, SoftPort port,
                  SoftCompletionQueue receiveCq, @Nullable ReceiveRing ring) {
        this.qp = qp;
        this.device = device;
        this.engine = device.engine;
        this.pd = pd;
        this.port = port;
        this.receiveCq = receiveCq;
        this.ring = ring;
        this.qpn = qp.qpn;
    }

    /** At RTR: the peer's first PSN is the one expected next. */
    void connected(int peerStartPsn) {
        expectedPsn = peerStartPsn & SoftQueuePair.PSN_MASK;
        ackPsn = (expectedPsn - 1) & SoftQueuePair.PSN_MASK;
        nakOutstanding = false;
        atomicResults.clear();
    }

    /** Engine: an RC request for this QP. */
    void onRequest(SoftFrame f, long nowNs) {
        // a torn WRITE completes before any later request executes, as RC orders a WRITE before what follows
        engine.applyTornPieces();
        QpState s = qp.state();
        if ((s != QpState.RTR && s != QpState.RTS) || qp.type() != QpType.RC || f.sourceQpn != qp.remoteQpn()) {
            return;
        }
        int d = SoftQueuePair.psnDiff(f.psn, expectedPsn);
        if (d > 0) {
            if (!nakOutstanding) {
                nakOutstanding = true;
                device.rcSequenceNaks++;
                flushAck(nowNs);
                sendControl(FrameType.SEQUENCE_NAK, expectedPsn, WcStatus.SUCCESS, nowNs);
            }
            return;
        }
        if (d < 0) {
            device.rcDuplicateRequests++;
            if (f.type == FrameType.RDMA_READ_REQUEST) {
                executeRead(f, nowNs);
            } else if (f.type == FrameType.ATOMIC_FETCH_ADD || f.type == FrameType.ATOMIC_CMP_SWAP) {
                if (atomicResults.find(f.psn)) {
                    device.rcAtomicReplays++;
                    flushAck(nowNs);
                    sendAtomicResponse(f.psn, atomicResults.lastResult(), nowNs);
                }
            } else {
                engine.queueAck(this);
            }
            return;
        }
        FrameType type = f.type;
        if (type == FrameType.SEND) {
            executeSend(f, nowNs, false);
            return;
        }
        switch (type) {
            case RDMA_WRITE -> {
                SoftMemoryRegion mr = device.lookupRemote(f.rkey);
                String problem = RegionCheck.remote(pd, mr, f.rkey, f.remoteAddress, f.length, Access.REMOTE_WRITE);
                if (problem != null) {
                    device.remoteAccessRefused++;
                    responderError(f, nowNs, WcStatus.REM_ACCESS_ERR);
                    return;
                }
                if (f.hasImmediate) {
                    executeSend(f, nowNs, true);
                    return;
                }
                if (!f.payloadPlaced) {
                    writeInto(mr, f);
                }
                accepted(f);
            }
            case RDMA_READ_REQUEST -> {
                SoftMemoryRegion mr = device.lookupRemote(f.rkey);
                if (RegionCheck.remote(pd, mr, f.rkey, f.remoteAddress, f.length, Access.REMOTE_READ) != null) {
                    device.remoteAccessRefused++;
                    responderError(f, nowNs, WcStatus.REM_ACCESS_ERR);
                    return;
                }
                flushAck(nowNs);
                executeRead(f, nowNs);
                expectedPsn = (expectedPsn + 1) & SoftQueuePair.PSN_MASK;
                ackPsn = f.psn;
                nakOutstanding = false;
            }
            case ATOMIC_FETCH_ADD, ATOMIC_CMP_SWAP -> executeAtomic(f, nowNs);
            default -> {
            }
        }
    }

    /**
     * An atomic request with the expected PSN: checks rkey, bounds, protection domain and REMOTE_ATOMIC
     * (REM_ACCESS_ERR) and the alignment (REM_INV_REQ_ERR), runs it on the memory, saves the result for
     * duplicates and answers it; the answer also acknowledges everything before.
     */
    private void executeAtomic(SoftFrame f, long nowNs) {
        SoftMemoryRegion mr = device.lookupRemote(f.rkey);
        if (RegionCheck.remote(pd, mr, f.rkey, f.remoteAddress, Long.BYTES, Access.REMOTE_ATOMIC) != null) {
            device.remoteAccessRefused++;
            responderError(f, nowNs, WcStatus.REM_ACCESS_ERR);
            return;
        }
        if ((f.remoteAddress & (Long.BYTES - 1)) != 0 || !SoftAtomics.hasPayload(f, SoftAtomics.REQUEST_BYTES)) {
            responderError(f, nowNs, WcStatus.REM_INV_REQ_ERR);
            return;
        }
        long compareAdd = SoftAtomics.payloadLong(f, 0);
        int index = (int) (f.remoteAddress - mr.address());
        long original;
        try {
            original = f.type == FrameType.ATOMIC_FETCH_ADD
                ? SoftAtomics.fetchAndAdd(mr.base, index, compareAdd)
                : SoftAtomics.compareAndSwap(mr.base, index, compareAdd, SoftAtomics.payloadLong(f, 8));
        } catch (java.nio.ReadOnlyBufferException e) {
            device.remoteAccessRefused++;
            responderError(f, nowNs, WcStatus.REM_ACCESS_ERR);
            return;
        }
        atomicResults.saved(f.psn, original);
        flushAck(nowNs);
        sendAtomicResponse(f.psn, original, nowNs);
        expectedPsn = (expectedPsn + 1) & SoftQueuePair.PSN_MASK;
        ackPsn = f.psn;
        nakOutstanding = false;
    }

    private void sendAtomicResponse(int psn, long original, long nowNs) {
        Route r = qp.route();
        if (!port.isUp() || r == null) {
            return;
        }
        SoftFrame f = device.claimFrame();
        f.type = FrameType.ATOMIC_RESPONSE;
        f.route = r;
        f.sourceQpn = qpn;
        f.destinationQpn = qp.remoteQpn();
        f.psn = psn;
        SoftAtomics.writeResponse(f, original);
        f.sentAtNs = nowNs;
        f.deliverAtNs = device.monotoneArrival(port, port.controlArrival(nowNs));
        device.transmitRc(port, f, nowNs);
    }

    private void accepted(SoftFrame f) {
        expectedPsn = (expectedPsn + 1) & SoftQueuePair.PSN_MASK;
        ackPsn = f.psn;
        nakOutstanding = false;
        engine.queueAck(this);
    }

    /**
     * Places a WRITE's data: the last 8 bytes after the rest ({@link NativeMemory#placeWrite}), or, on a
     * port whose rail tears WRITEs ({@link RailConfig#tornWrites()}), out of address order in pieces: the
     * first quarter and the second half (with the last byte) now, the second quarter when the device
     * applies its held pieces (its next engine pass or request), so a reader between them sees both ends
     * of the WRITE and stale bytes in its middle.
     */
    private void writeInto(SoftMemoryRegion mr, SoftFrame f) {
        SoftDevice.Scratch s = device.scratch;
        s.buffers[0] = mr.base;
        if (f.length >= 32 && port.rail().tornWrites()) {
            int quarter = f.length / 4;
            int half = f.length / 2;
            byte[] held = NativeMemory.readRange(f, quarter, half);
            NativeMemory.copyRange(f, half, f.length, f.remoteAddress);
            NativeMemory.copyRange(f, 0, quarter, f.remoteAddress);
            engine.holdTornPiece(mr, f.remoteAddress + quarter, held);
            return;
        }
        NativeMemory.placeWrite(f, f.remoteAddress, f.length);
    }

    /** SEND, SEND_WITH_IMM, or (withWrite) RDMA_WRITE_WITH_IMM whose rkey was checked. */
    private void executeSend(SoftFrame f, long nowNs, boolean withWrite) {
        ReceiveRing ring = this.ring;
        int slot = ring == null ? -1 : ring.peek();
        if (slot < 0 || !receiveCq.hasRoom()) {
            flushAck(nowNs);
            sendControl(FrameType.NAK, f.psn, WcStatus.RNR_RETRY_EXC_ERR, nowNs);
            nakOutstanding = true;
            return;
        }
        if (withWrite) {
            if (!f.payloadPlaced) {
                writeInto(device.lookupRemote(f.rkey), f);
            }
            ring.consume();
            receiveCq.add(ring.wrIds[slot], WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, 0, true, f.immediate, qpn, 0, "");
            accepted(f);
            return;
        }
        SoftDevice.Scratch s = device.scratch;
        if (ring.numSges[slot] == 1 && placeInOne(ring, slot, f, s)) {
            ring.consume();
            receiveCq.add(ring.wrIds[slot], WcStatus.SUCCESS, WcOpcode.RECV, f.length, f.hasImmediate, f.immediate, qpn, 0, "");
            accepted(f);
            return;
        }
        String problem = resolveReceive(ring, slot, s);
        if (problem != null) {
            ring.consume();
            receiveCq.add(ring.wrIds[slot], WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0, qpn, 0, problem);
            responderError(f, nowNs, WcStatus.REM_OP_ERR);
            return;
        }
        long capacity = s.total;
        if (f.length > capacity) {
            ring.consume();
            receiveCq.add(ring.wrIds[slot], WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0, qpn, 0,
                "message of " + f.length + " bytes does not fit the posted receive of " + capacity + " bytes");
            responderError(f, nowNs, WcStatus.REM_INV_REQ_ERR);
            return;
        }
        NativeMemory.scatter(f, s.addresses, s.lengths, ring.numSges[slot], f.length);
        ring.consume();
        receiveCq.add(ring.wrIds[slot], WcStatus.SUCCESS, WcOpcode.RECV, f.length, f.hasImmediate, f.immediate, qpn, 0, "");
        accepted(f);
    }

    /**
     * The common case of a receive with one SGE: when that SGE passes every check of
     * {@link #resolveReceive} and holds the message, copies the payload into it and returns true;
     * otherwise does nothing and returns false, and the general path reports why.
     */
    private boolean placeInOne(ReceiveRing ring, int slot, SoftFrame f, SoftDevice.Scratch s) {
        int i = ring.sgeIndex(slot, 0);
        int lkey = ring.sgeLkeys[i];
        long addr = ring.sgeAddresses[i];
        int len = ring.sgeLengths[i];
        SoftMemoryRegion mr = device.lookupLocal(lkey);
        if (mr == null || mr.lkey() != lkey || !mr.isValid() || mr.pd() != pd || !mr.contains(addr, len)
            || (mr.access() & Access.LOCAL_WRITE) == 0 || f.length > len) {
            return false;
        }
        // the scratch list keeps the target region's buffer reachable during the copy
        if (s.buffers[0] != mr.base) {
            s.buffers[0] = mr.base;
        }
        NativeMemory.gatherInto(f, addr, f.length);
        return true;
    }

    /** Fills the scratch scatter list from a posted receive; null when every SGE is usable. */
    private @Nullable String resolveReceive(ReceiveRing ring, int slot, SoftDevice.Scratch s) {
        int n = ring.numSges[slot];
        long total = 0;
        for (int k = 0; k < n; k++) {
            int i = ring.sgeIndex(slot, k);
            int lkey = ring.sgeLkeys[i];
            long addr = ring.sgeAddresses[i];
            int len = ring.sgeLengths[i];
            SoftMemoryRegion mr = device.lookupLocal(lkey);
            if (mr == null || mr.lkey() != lkey || !mr.isValid() || mr.pd() != pd || !mr.contains(addr, len)
                || (mr.access() & Access.LOCAL_WRITE) == 0) {
                return "receive SGE " + k + ": " + RegionCheck.local(pd, mr, lkey, addr, len, true);
            }
            if (s.buffers[k] != mr.base) {
                s.buffers[k] = mr.base;
            }
            s.addresses[k] = addr;
            s.lengths[k] = len;
            total += len;
        }
        s.total = total;
        return null;
    }

    private void executeRead(SoftFrame request, long nowNs) {
        SoftMemoryRegion mr = device.lookupRemote(request.rkey);
        if (RegionCheck.remote(pd, mr, request.rkey, request.remoteAddress, request.length, Access.REMOTE_READ) != null) {
            return;
        }
        long arrival = port.depart(nowNs, request.length);
        if (!port.isUp() || qp.route() == null) {
            return;
        }
        SoftFrame f = device.claimFrame();
        f.type = FrameType.RDMA_READ_RESPONSE;
        f.route = qp.route();
        f.sourceQpn = qpn;
        f.destinationQpn = qp.remoteQpn();
        f.psn = request.psn;
        f.length = request.length;
        f.sentAtNs = nowNs;
        f.deliverAtNs = device.monotoneArrival(port, arrival);
        if (request.length > 0) {
            f.addPayload(mr.base, (int) (request.remoteAddress - mr.address()), request.length, request.remoteAddress);
        }
        device.transmitRc(port, f, nowNs);
    }

    private void responderError(SoftFrame f, long nowNs, WcStatus status) {
        flushAck(nowNs);
        sendControl(FrameType.NAK, f.psn, status, nowNs);
        qp.responderFailed();
    }

    /** Engine: sends the pending cumulative ACK now, if any (before a NAK or READ response, to keep order). */
    void flushAck(long nowNs) {
        if (ackQueued) {
            ackQueued = false;
            sendControl(FrameType.ACK, ackPsn, WcStatus.SUCCESS, nowNs);
        }
    }

    private void sendControl(FrameType t, int psn, WcStatus status, long nowNs) {
        Route r = qp.route();
        if (!port.isUp() || r == null) {
            return;
        }
        SoftFrame f = device.claimFrame();
        f.type = t;
        f.route = r;
        f.sourceQpn = qpn;
        f.destinationQpn = qp.remoteQpn();
        f.psn = psn;
        f.status = status;
        f.length = 0;
        f.sentAtNs = nowNs;
        f.deliverAtNs = device.monotoneArrival(port, port.controlArrival(nowNs));
        device.transmitRc(port, f, nowNs);
    }

    /** Engine: a UD datagram for this QP. */
    void onDatagram(SoftFrame f) {
        QpState s = qp.state();
        if ((s != QpState.RTR && s != QpState.RTS) || qp.type() != QpType.UD || f.qkey != qp.attributes().qkey()) {
            device.udDropped++;
            return;
        }
        ReceiveRing ring = this.ring;
        int slot = ring == null ? -1 : ring.peek();
        if (slot < 0 || !receiveCq.hasRoom()) {
            device.udDropped++;
            return;
        }
        ring.consume();
        SoftDevice.Scratch sc = device.scratch;
        String problem = resolveReceive(ring, slot, sc);
        if (problem != null) {
            receiveCq.add(ring.wrIds[slot], WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, false, 0, qpn, f.sourceQpn, problem);
            return;
        }
        long capacity = sc.total;
        if (f.length > capacity) {
            receiveCq.add(ring.wrIds[slot], WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0, qpn, f.sourceQpn,
                "datagram of " + f.length + " bytes does not fit the posted receive of " + capacity + " bytes");
            return;
        }
        NativeMemory.scatter(f, sc.addresses, sc.lengths, ring.numSges[slot], f.length);
        receiveCq.add(ring.wrIds[slot], WcStatus.SUCCESS, WcOpcode.RECV, f.length, f.hasImmediate, f.immediate, qpn, f.sourceQpn, "");
    }
}
