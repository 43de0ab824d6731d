package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import org.jspecify.annotations.Nullable;

/**
 * The requester side of an RC {@link SoftQueuePair}: the InfiniBand reliable connection (IBA Vol. 1,
 * chapter 9.7, reliable service), with go-back-N retransmission as RC NICs do it. It consumes the
 * {@link SendRing} the {@link SendPoster} fills; per slot three indices move forward: {@code txIndex}
 * (next to transmit), {@code ackedIndex} (acknowledged by the responder) and {@code head} (completed
 * to the CQ; the slot is free again).
 *
 * <p>One frame per work request, PSN = {@code startPsn + index} (24 bits). Requests are pipelined up
 * to the rail's token bucket. Responses: a cumulative ACK, a READ response (which also acknowledges
 * everything before it), or a NAK; each acknowledges earlier requests implicitly, but never an RDMA
 * READ whose response has not arrived. Responses for PSNs already acknowledged (duplicates, late ones)
 * are ignored. A NAK - PSN sequence error ({@link FrameType#SEQUENCE_NAK}: the responder saw a gap) and
 * a READ response arriving while an earlier READ's response is missing both rewind transmission at once
 * to the oldest unacknowledged request (go-back-N), once per such request (a repeated NAK for it is
 * stale; a lost retransmission is left to the ACK timer), counted against {@code retryCount} like a
 * timeout and in {@link SoftDevice#rcNakRetransmits()}. A receiver-not-ready NAK rewinds transmission
 * to that PSN and retries after {@code rnrTimeoutNs}, up to {@code rnrRetryCount} times (7 = forever),
 * then completes the work request with RNR_RETRY_EXC_ERR. The ACK timer expires {@code retryTimeoutNs}
 * after the later of (a) a round trip after the last ACK and (b) when the last outstanding frame's ACK
 * could first arrive: its departure end on the shaped link plus a round trip. (b) is what a real NIC
 * does by starting the timer when the packet leaves, so a large write still serializing behind an
 * acknowledged one is not retried early. When it expires (port down, peer gone), transmission rewinds
 * to the oldest unacknowledged request (go-back-N, counted in {@link SoftDevice#rcRetransmits()}).
 * {@code retryCount} consecutive retries without forward progress (timeouts and sequence-error
 * rewinds; any newly acknowledged request restarts the count) are allowed; the next expiry completes
 * the oldest request with RETRY_EXC_ERR. The responder never executes a PSN twice
 * ({@link SoftResponder}), so a lost request, a lost ACK, a duplicated or reordered frame all end in
 * each message delivered exactly once, in order. Any error moves the QP to ERROR ({@link ErrorFlush}).
 *
 * <h2>Broken route</h2>
 * When the transport reports the QP's route broken for good ({@link SoftDevice#routeBroken}), the QP
 * goes to ERROR even if it only receives: the oldest unacknowledged send (if any) completes with
 * RETRY_EXC_ERR, the rest as {@link ErrorFlush} says.
 *
 * <h2>Atomics</h2>
 * ATOMIC_CMP_AND_SWP and ATOMIC_FETCH_AND_ADD travel like an RDMA READ: one request frame with the
 * operands ({@link SoftAtomics}), one response with the original value, which the requester writes
 * into the work request's 8-byte SGE; the response acknowledges earlier requests, and no ACK
 * acknowledges an atomic whose response has not arrived. At most {@link SoftAtomics#DEPTH} atomics are
 * unanswered at a time ({@code max_rd_atomic}): a later one waits for an earlier one's response, so the
 * responder's {@link AtomicReplayCache} still holds the result of every atomic the requester may
 * retransmit.
 *
 * <p>Thread-safety: the NIC's engine thread only; {@link SoftQueuePair} checks the QP's state and the
 * response's source before it calls in.
 */
final class RcRequester {
    /** The frame type each work request opcode travels as, by opcode ordinal. */
    private static final FrameType[] FRAME_TYPES = frameTypes();

    private final SoftQueuePair qp;
    private final SoftDevice device;
    private final SoftPort port;
    private final SendRing sq;
    private final SendSges sges;
    private final ErrorFlush errors;
    private final SoftCompletionQueue sendCq;
    private final QpInitAttributes attributes;
    /** The transport timeout in force: the attribute, raised to the provider's floor ({@link SoftProvider.Builder#minRetryTimeoutNs}). */
    private final long retryTimeoutNs;
    private final int qpn;
    private final int startPsn;

    private long head;
    private long ackedIndex;
    private long txIndex;
    private long highestTx;
    private long rnrWaitUntilNs;
    private boolean rnrWaiting;
    private int rnrRetries;
    private int transportRetries;
    /** The oldest unacknowledged index the last NAK-driven go-back-N rewound to; -1 for none. */
    private long lastNakRewindIndex = -1;
    private long ackDeadlineNs;
    /** ACK deadline of the most recently transmitted frame: its departure end + round trip + retry timeout. */
    private long lastTxDeadlineNs;
    /** Set by {@link #routeBroken}; applied by {@link #applyRouteBroken} at the start of the next pass. */
    private @Nullable String routeBrokenReason;

    RcRequester(SoftQueuePair qp, SoftDevice device, SoftPort port, SendRing sq, SendSges sges, ErrorFlush errors,
                long retryTimeoutNs, int startPsn) {
        this.qp = qp;
        this.device = device;
        this.port = port;
        this.sq = sq;
        this.sges = sges;
        this.errors = errors;
        this.sendCq = qp.sendCq;
        this.attributes = qp.attributes();
        this.retryTimeoutNs = retryTimeoutNs;
        this.qpn = qp.qpn;
        this.startPsn = startPsn;
    }

    private int psnOf(long index) {
        return (int) ((startPsn + index) & SoftQueuePair.PSN_MASK);
    }

    /** No broken route to apply, no timer running and every posted work request completed. */
    boolean idle() {
        return routeBrokenReason == null && !rnrWaiting && head == sq.tail.get();
    }

    /** Ns until the ACK retry deadline or the end of an RNR wait; {@link Long#MAX_VALUE} when neither runs. */
    long timerDueInNs(long nowNs) {
        long due = Long.MAX_VALUE;
        if (txIndex > ackedIndex) {
            due = ackDeadlineNs - nowNs;
        }
        if (rnrWaiting) {
            due = Math.min(due, rnrWaitUntilNs - nowNs);
        }
        return due;
    }

    /** In RTS: completions, the ACK timer, the RNR wait, transmission. */
    int doSends(long nowNs) {
        int work = completeAcked();
        if (qp.state() == QpState.ERROR) {
            return work + flush();
        }
        if (txIndex > ackedIndex && nowNs - ackDeadlineNs >= 0) {
            if (++transportRetries > attributes.retryCount()) {
                errors.failAt(ackedIndex, WcStatus.RETRY_EXC_ERR, "no acknowledgement from " + qp.destination() + " after "
                    + attributes.retryCount() + " retries of " + retryTimeoutNs + " ns (port down or peer gone)");
                return work + 1 + flush();
            }
            txIndex = ackedIndex;
            ackDeadlineNs = nowNs + retryTimeoutNs;
            device.rcRetransmits++;
            work++;
            Route stalled = qp.route();
            if (stalled != null) {
                // before the retransmissions: a stream transport may give them a fresh connection
                device.attachment().routeStalled(stalled, nowNs);
            }
        }
        if (rnrWaiting) {
            if (nowNs - rnrWaitUntilNs < 0) {
                return work;
            }
            rnrWaiting = false;
        }
        return work + transmit(nowNs);
    }

    /** New work only (see {@link SoftQueuePair#transmitPosted}): nothing rewound, no RNR wait or route failure pending. */
    int transmitPosted(long nowNs) {
        if (txIndex != highestTx || rnrWaiting || routeBrokenReason != null || txIndex >= sq.tail.get()) {
            return 0;
        }
        return transmit(nowNs);
    }

    /** Transmits posted work requests from {@code txIndex} on while the rail takes them. */
    private int transmit(long nowNs) {
        int work = 0;
        long tail = sq.engineTail();
        Route r = qp.route();
        int remoteQpn = qp.remoteQpn();
        RailConfig rail = port.engineRail();
        boolean unshaped = rail.isUnshaped();
        boolean up = port.isUp();
        long deadlineAfterArrivalNs = rail.latencyNs() + retryTimeoutNs;
        FrameTransport.Attachment transport = device.attachment();
        RcFaults faults = port.rcFaults();
        while (txIndex < tail) {
            int slot = (int) txIndex & sq.mask;
            if (sq.error[slot] != SendRing.NO_ERROR) {
                if (txIndex == ackedIndex) {
                    errors.failAt(txIndex, SendRing.WC_STATUSES[sq.error[slot]], sq.errorDetail[slot]);
                    return work + 1 + flush();
                }
                break;
            }
            if (!unshaped && !port.mayTransmit(nowNs)) {
                break;
            }
            WrOpcode op = sq.op(slot);
            boolean atomic = op.isAtomic();
            if (atomic && atomicsUnanswered() >= SoftAtomics.DEPTH) {
                break;
            }
            boolean responded = atomic || op == WrOpcode.RDMA_READ;
            SoftFrame f = device.claimFrame();
            if (!responded ? !sges.gather(slot, f) : !sges.checkReadTargets(slot)) {
                f.release();
                continue;
            }
            int len = sq.length[slot];
            long arrival = unshaped ? nowNs
                : device.monotoneArrival(port, responded ? port.controlArrival(nowNs) : port.depart(nowNs, len));
            if (up && r != null) {
                if (f.route != r) {
                    f.route = r;
                }
                f.sourceQpn = qpn;
                f.destinationQpn = remoteQpn;
                f.psn = psnOf(txIndex);
                if (sq.hasImm[slot]) {
                    f.hasImmediate = true;
                    f.immediate = sq.imm[slot];
                }
                if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
                    f.remoteAddress = sq.remoteAddress[slot];
                    f.rkey = sq.rkey[slot];
                }
                f.length = len;
                if (atomic) {
                    SoftAtomics.writeRequest(f, sq.compareAdd[slot], sq.swap[slot]);
                }
                f.sentAtNs = nowNs;
                f.deliverAtNs = arrival;
                f.type = FRAME_TYPES[op.ordinal()];
                if (faults == null) {
                    transport.transmit(f);
                } else {
                    faults.transmit(f, nowNs, device);
                }
            } else {
                f.release();
            }
            long deadline = arrival + deadlineAfterArrivalNs;
            lastTxDeadlineNs = deadline;
            if (txIndex == ackedIndex || deadline - ackDeadlineNs > 0) {
                ackDeadlineNs = deadline;
            }
            txIndex++;
            if (txIndex > highestTx) {
                highestTx = txIndex;
            }
            work++;
        }
        return work;
    }

    /** Atomics sent and not answered: those between the oldest unacknowledged request and {@code txIndex}. */
    private int atomicsUnanswered() {
        int n = 0;
        for (long i = ackedIndex; i < txIndex && n < SoftAtomics.DEPTH; i++) {
            if (sq.op((int) i & sq.mask).isAtomic()) {
                n++;
            }
        }
        return n;
    }

    /** Completes acknowledged work requests while the CQ has room. */
    private int completeAcked() {
        int n = 0;
        while (head < ackedIndex) {
            int slot = (int) head & sq.mask;
            if (sq.signaled[slot]) {
                if (!sendCq.hasRoom()) {
                    break;
                }
                sendCq.add(sq.wrId[slot], WcStatus.SUCCESS, SendRing.wcOpcode(sq.op(slot)), sq.length[slot], false, 0, qpn, 0, "");
            }
            head++;
            n++;
        }
        if (n > 0) {
            sq.head.lazySet(head);
        }
        return n;
    }

    /** In ERROR: completes everything outstanding ({@link ErrorFlush}). */
    int flush() {
        long from = head;
        head = errors.flushSends(head, ackedIndex);
        txIndex = Math.max(txIndex, head);
        ackedIndex = Math.max(ackedIndex, head);
        return (int) (head - from) + errors.flushReceives();
    }

    /**
     * The transport says the QP's route can no longer carry frames. Recorded here and applied by the
     * next pass ({@link #applyRouteBroken}) rather than at once, because the transport may call while
     * this QP is in the middle of transmitting.
     */
    void routeBroken(String reason) {
        if (routeBrokenReason == null) {
            routeBrokenReason = reason;
        }
    }

    boolean routeBrokenPending() {
        return routeBrokenReason != null;
    }

    /**
     * At the start of a pass, the QP in {@code state}: in RTR or RTS, the oldest unacknowledged send
     * (if any) completes with RETRY_EXC_ERR; else the flushed receives carry the reason.
     */
    void applyRouteBroken(QpState state) {
        String reason = routeBrokenReason;
        routeBrokenReason = null;
        if (state == QpState.ERROR || state == QpState.RESET || state == QpState.INIT) {
            return;
        }
        String detail = reason + "; no retry can reach " + qp.destination();
        if (sq.tail.get() > ackedIndex) {
            errors.failAt(ackedIndex, WcStatus.RETRY_EXC_ERR, detail);
        } else {
            // no send to carry the reason: the flushed receives say it, else an idle QP's user sees a bare flush
            errors.fail(detail);
        }
    }

    /** A response (ACK, NAK, READ or atomic response) from the connected peer, the QP in RTS. */
    void onResponse(SoftFrame f, long nowNs) {
        long index = head + SoftQueuePair.psnDiff(f.psn, psnOf(head));
        if (index < ackedIndex || index >= highestTx) {
            return;
        }
        switch (f.type) {
            case ACK -> acknowledge(index + 1, nowNs);
            case RDMA_READ_RESPONSE -> {
                int slot = (int) index & sq.mask;
                if (sq.opcode[slot] != WrOpcode.RDMA_READ.ordinal()) {
                    return;
                }
                acknowledge(index, nowNs);
                if (ackedIndex < index) {
                    // an earlier READ's response is missing (lost or overtaken): this one is out of
                    // sequence, an implicit NAK; go back to the oldest unacknowledged request
                    goBackN(nowNs);
                    return;
                }
                String problem = sges.scatterReadResponse(slot, f);
                if (problem != null) {
                    errors.failAt(index, WcStatus.LOC_PROT_ERR, problem);
                    return;
                }
                sq.readDone[slot] = true;
                progress(index + 1, nowNs);
            }
            case ATOMIC_RESPONSE -> {
                int slot = (int) index & sq.mask;
                if (!sq.op(slot).isAtomic() || !SoftAtomics.hasPayload(f, SoftAtomics.RESPONSE_BYTES)) {
                    return;
                }
                acknowledge(index, nowNs);
                if (ackedIndex < index) {
                    // an earlier READ's or atomic's response is missing: as for a READ response
                    goBackN(nowNs);
                    return;
                }
                String problem = sges.placeAtomicResult(slot, SoftAtomics.payloadLong(f, 0));
                if (problem != null) {
                    errors.failAt(index, WcStatus.LOC_PROT_ERR, problem);
                    return;
                }
                sq.readDone[slot] = true;
                progress(index + 1, nowNs);
            }
            case SEQUENCE_NAK -> {
                if (!rnrWaiting) {
                    acknowledge(index, nowNs);
                    goBackN(nowNs);
                }
            }
            case NAK -> {
                acknowledge(index, nowNs);
                if (f.status == WcStatus.RNR_RETRY_EXC_ERR) {
                    int limit = attributes.rnrRetryCount();
                    if (limit != 7 && ++rnrRetries > limit) {
                        errors.failAt(index, WcStatus.RNR_RETRY_EXC_ERR, "receiver not ready: " + qp.destination()
                            + " had no receive posted after " + limit + " RNR retries of " + attributes.rnrTimeoutNs() + " ns");
                        return;
                    }
                    // from the NAKed request, or from an earlier READ still missing its response
                    txIndex = ackedIndex;
                    rnrWaitUntilNs = nowNs + attributes.rnrTimeoutNs();
                    rnrWaiting = true;
                    ackDeadlineNs = rnrWaitUntilNs + retryTimeoutNs;
                } else {
                    errors.failAt(index, f.status, "responder " + qp.destination() + " answered " + f.status
                        + describeNak(f.status, (int) index & sq.mask));
                }
            }
            default -> {
            }
        }
    }

    private String describeNak(WcStatus status, int slot) {
        return switch (status) {
            case REM_ACCESS_ERR -> " for remote address 0x" + Long.toHexString(sq.remoteAddress[slot]) + " rkey 0x"
                + Integer.toHexString(sq.rkey[slot]) + " length " + sq.length[slot] + " (wrong rkey, out of bounds or missing access right)";
            case REM_INV_REQ_ERR -> sq.op(slot).isAtomic()
                ? " for the atomic at remote address 0x" + Long.toHexString(sq.remoteAddress[slot]) + " (not an aligned 8-byte word)"
                : ": the posted receive is smaller than the " + sq.length[slot] + "-byte message";
            default -> "";
        };
    }

    /**
     * Acknowledges the work requests before index {@code upTo}, stopping at the first RDMA READ or atomic
     * whose response has not arrived: an ACK, a NAK or a later response acknowledges earlier requests
     * implicitly, but not the data of a READ or the original value of an atomic.
     */
    private void acknowledge(long upTo, long nowNs) {
        long i = ackedIndex;
        while (i < upTo) {
            int slot = (int) i & sq.mask;
            WrOpcode op = sq.op(slot);
            if ((op == WrOpcode.RDMA_READ || op.isAtomic()) && !sq.readDone[slot]) {
                break;
            }
            i++;
        }
        progress(i, nowNs);
    }

    /**
     * Go-back-N on a NAK - PSN sequence error or a READ response gap, without waiting for the ACK timer:
     * transmission rewinds to the oldest unacknowledged request. Counted against {@code retryCount} like a
     * timeout (the count restarts with every forward progress). At most one such rewind per oldest
     * unacknowledged request: the responder NAKs a gap once, so a second NAK for it is a stale or
     * duplicated one, and a second READ gap a consequence of the first; if the retransmission is lost
     * too, the ACK timer recovers.
     */
    private void goBackN(long nowNs) {
        if (txIndex <= ackedIndex || ackedIndex == lastNakRewindIndex) {
            return;
        }
        lastNakRewindIndex = ackedIndex;
        if (++transportRetries > attributes.retryCount()) {
            errors.failAt(ackedIndex, WcStatus.RETRY_EXC_ERR, "no progress with " + qp.destination() + " after "
                + attributes.retryCount() + " retries (PSN sequence errors and ACK timeouts)");
            return;
        }
        txIndex = ackedIndex;
        ackDeadlineNs = nowNs + retryTimeoutNs;
        device.rcNakRetransmits++;
    }

    private void progress(long newAcked, long nowNs) {
        if (newAcked > ackedIndex) {
            ackedIndex = newAcked;
            transportRetries = 0;
            rnrRetries = 0;
            if (txIndex < ackedIndex) {
                txIndex = ackedIndex;
            }
            long fresh = nowNs + retryTimeoutNs + 2 * port.engineRail().latencyNs();
            // Like a NIC's ACK timer, which starts when a packet leaves: a frame still queued on the
            // shaped link (arrivals are monotone, so the last one transmitted is the latest) must
            // not time out before it could have been acknowledged.
            ackDeadlineNs = txIndex > ackedIndex && lastTxDeadlineNs - fresh > 0 ? lastTxDeadlineNs : fresh;
        }
    }

    private static FrameType[] frameTypes() {
        FrameType[] t = new FrameType[SendRing.WR_OPCODES.length];
        for (WrOpcode op : SendRing.WR_OPCODES) {
            t[op.ordinal()] = switch (op) {
                case SEND, SEND_WITH_IMM -> FrameType.SEND;
                case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> FrameType.RDMA_WRITE;
                case RDMA_READ -> FrameType.RDMA_READ_REQUEST;
                case ATOMIC_FETCH_AND_ADD -> FrameType.ATOMIC_FETCH_ADD;
                case ATOMIC_CMP_AND_SWP -> FrameType.ATOMIC_CMP_SWAP;
            };
        }
        return t;
    }
}
