package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.ScatterGatherEntry;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * A soft queue pair: the verbs QP semantics of the soft NIC, independent of how frames travel.
 *
 * <h2>Send queue</h2>
 * A preallocated {@link SendRing}. {@link #postSend} copies the work request into the next
 * slot (and, for inline sends, its payload into the slot's inline area) under the QP's post lock and
 * publishes it with a release store; the engine consumes it. Per slot, three engine indices move
 * forward: {@code txIndex} (next to transmit), {@code ackedIndex} (acknowledged by the responder)
 * and {@code head} (completed to the CQ; the slot is free again).
 *
 * <h2>RC requester</h2>
 * The requester side of the InfiniBand reliable connection (IBA Vol. 1, chapter 9.7, reliable
 * service), with go-back-N retransmission as RC NICs do it. One frame per work request, PSN =
 * {@code startPsn + index} (24 bits). Requests are pipelined up to the rail's token bucket.
 * Responses: a cumulative ACK, a READ response (which also acknowledges everything before it), or a
 * NAK; each acknowledges earlier requests implicitly, but never an RDMA READ whose response has not
 * arrived. Responses for PSNs already acknowledged (duplicates, late ones) are ignored. A NAK - PSN
 * sequence error ({@link FrameType#SEQUENCE_NAK}: the responder saw a gap) and a READ response
 * arriving while an earlier READ's response is missing both rewind transmission at once to the oldest
 * unacknowledged request (go-back-N), once per such request (a repeated NAK for it is stale; a lost
 * retransmission is left to the ACK timer), counted against {@code retryCount} like a timeout and in
 * {@link SoftDevice#rcNakRetransmits()}. A receiver-not-ready NAK rewinds transmission to that PSN and
 * retries after {@code rnrTimeoutNs}, up to {@code rnrRetryCount} times (7 = forever), then
 * completes the work request with RNR_RETRY_EXC_ERR. The ACK timer expires {@code retryTimeoutNs}
 * after the later of (a) a round trip after the last ACK and (b) when the last outstanding frame's
 * ACK could first arrive: its departure end on the shaped link plus a round trip. (b) is what a real
 * NIC does by starting the timer when the packet leaves, so a large write still serializing behind
 * an acknowledged one is not retried early. When it expires (port down, peer gone),
 * transmission rewinds to the oldest unacknowledged request (go-back-N, counted in
 * {@link SoftDevice#rcRetransmits()}). {@code retryCount} consecutive retries without forward
 * progress (timeouts and sequence-error rewinds; any newly acknowledged request restarts the count)
 * are allowed; the next expiry completes the oldest request with RETRY_EXC_ERR. The responder never
 * executes a PSN twice ({@link SoftResponder}), so a lost request, a lost ACK, a duplicated or
 * reordered frame all end in each message delivered exactly once, in order. Any error moves the QP
 * to ERROR.
 *
 * <h2>Atomics</h2>
 * ATOMIC_CMP_AND_SWP and ATOMIC_FETCH_AND_ADD travel like an RDMA READ: one request frame with the
 * operands ({@link SoftAtomics}), one response with the original value, which the requester writes into
 * the work request's 8-byte SGE; the response acknowledges earlier requests, and no ACK acknowledges an
 * atomic whose response has not arrived. Checked at post time: an RC QP on a device with
 * {@code atomics}, not inline, else {@link VerbsException}; one SGE of exactly 8 bytes (else LOC_LEN_ERR)
 * and an 8-byte aligned remote address (else LOC_QP_OP_ERR), as a completion, never sent. At most
 * {@link SoftAtomics#DEPTH} atomics are unanswered at a time ({@code max_rd_atomic}): a later one waits
 * for an earlier one's response, so the responder's {@link AtomicReplayCache} still holds the result of
 * every atomic the requester may retransmit.
 *
 * <h2>Receiving side</h2>
 * The RC responder and the UD receiver live in {@link SoftResponder} ({@link #responder}).
 *
 * <h2>UD</h2>
 * A datagram leaves at once and its send completes when it leaves; above the port MTU it completes
 * with LOC_LEN_ERR, and the QP stays in RTS (hardware would put the send queue in an error state;
 * keeping the QP usable is what a datagram layer above wants and does not hide the error). The
 * receiver drops it silently when no receive is posted, the Q_Key differs, or the QP is not ready.
 * Receive completions carry the source QPN; byte length is the payload (no 40-byte GRH is prepended).
 * Reception is in {@link SoftResponder}.
 *
 * <h2>Broken route</h2>
 * When the transport reports the QP's route broken for good ({@link SoftDevice#routeBroken}), the QP
 * goes to ERROR even if it only receives: the oldest unacknowledged send (if any) completes with
 * RETRY_EXC_ERR, the rest as below.
 *
 * <h2>ERROR</h2>
 * Acknowledged work requests complete with SUCCESS, the failed one with its error status, every
 * later one (and every one posted afterwards, and every receive on the QP's own receive queue) with
 * WR_FLUSH_ERR, signaled or not.
 */
final class SoftQueuePair implements QueuePair {
    static final int PSN_MASK = 0xFFFFFF;
    private static final int SGES = SendWorkRequest.MAX_SGE;
    private static final WrOpcode[] WR_OPCODES = WrOpcode.values();
    private static final WcStatus[] WC_STATUSES = WcStatus.values();
    /** The frame type each work request opcode travels as, by opcode ordinal. */
    private static final FrameType[] FRAME_TYPES = frameTypes();
    private static final java.lang.invoke.VarHandle DOORBELL;

    static {
        try {
            DOORBELL = java.lang.invoke.MethodHandles.lookup().findVarHandle(SoftQueuePair.class, "doorbell", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private static final byte NO_ERROR = -1;
    private static final long MAX_MESSAGE_BYTES = SoftDevice.CAPABILITIES.maxMessageBytes();

    private final SoftDevice device;
    private final SoftProtectionDomain pd;
    private final QpInitAttributes attributes;
    /** The transport timeout in force: the attribute, raised to the provider's floor ({@link SoftProvider.Builder#minRetryTimeoutNs}). */
    private final long retryTimeoutNs;
    private final QpType type;
    private final SoftPort port;
    final int qpn;
    final SoftCompletionQueue sendCq;
    final SoftCompletionQueue receiveCq;
    private final @Nullable SoftSharedReceiveQueue srq;
    private final @Nullable ReceiveRing rq;
    private final int startPsn;
    private volatile QpState state = QpState.RESET;
    private volatile boolean closed;
    /** Rung and not yet taken by the engine ({@link ActiveQueuePairs}). */
    private volatile boolean doorbell;
    /** Engine: in the device's active list ({@link ActiveQueuePairs}). */
    boolean active;

    // connection (RC), set at RTR before the QP can send or receive
    private @Nullable Route route;
    private int remoteQpn;
    private @Nullable QpEndpoint remote;

    // send queue
    private final SendRing sq;
    private final java.util.concurrent.atomic.AtomicBoolean postLock = new java.util.concurrent.atomic.AtomicBoolean();
    private final boolean singlePoster;

    // requester, engine only
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
    private long errorIndex = -1;
    private WcStatus errorStatus = WcStatus.SUCCESS;
    private String errorDetail = "";
    /** Set by {@link #routeBroken} (engine thread); applied at the start of the next pass. */
    private @Nullable String routeBrokenReason;
    /** Why the QP went to ERROR, for the detail of the completions it flushes; null: the plain detail. */
    private @Nullable String flushDetail;

    /** The receiving side of this QP (RC responder, UD receiver). */
    final SoftResponder responder;

    SoftQueuePair(SoftDevice device, SoftProtectionDomain pd, QpInitAttributes a, @Nullable SoftSharedReceiveQueue srq, int qpn) {
        this.device = device;
        this.pd = pd;
        this.attributes = a;
        this.retryTimeoutNs = Math.max(a.retryTimeoutNs(), device.provider().minRetryTimeoutNs());
        this.type = a.type();
        this.port = (SoftPort) a.port();
        this.qpn = qpn;
        this.sendCq = (SoftCompletionQueue) a.sendCq();
        this.receiveCq = (SoftCompletionQueue) a.receiveCq();
        this.srq = srq;
        this.singlePoster = device.provider().threadDomain();
        this.rq = srq == null ? new ReceiveRing(a.maxReceiveWr(), singlePoster) : null;
        this.startPsn = (qpn * 0x9E3779B1) & PSN_MASK;
        this.sq = new SendRing(a.maxSendWr(), a.maxInlineBytes());
        this.responder = new SoftResponder(this, device, pd, port, receiveCq, srq != null ? srq.ring : rq);
    }

    // ------------------------------------------------------------------ public API

    @Override
    public int qpNumber() {
        return qpn;
    }

    @Override
    public QpType type() {
        return type;
    }

    @Override
    public QpState state() {
        return state;
    }

    @Override
    public Port port() {
        return port;
    }

    @Override
    public QpInitAttributes attributes() {
        return attributes;
    }

    @Override
    public QpEndpoint localEndpoint() {
        return new QpEndpoint(port.address(), qpn, startPsn, port.mtuBytes());
    }

    @Override
    public synchronized void init() {
        checkOpen("init()");
        requireState(QpState.RESET, "init()");
        state = QpState.INIT;
    }

    @Override
    public synchronized void readyToReceive(QpEndpoint remoteEndpoint) {
        checkOpen("readyToReceive(remote)");
        if (type != QpType.RC) {
            throw new VerbsException("QP " + qpn + " is UD; call readyToReceive() without a remote endpoint");
        }
        requireState(QpState.INIT, "readyToReceive(remote)");
        Route r = device.attachment().resolve(remoteEndpoint.address());
        this.route = r;
        this.remoteQpn = remoteEndpoint.qpn();
        this.remote = remoteEndpoint;
        responder.connected(remoteEndpoint.startPsn());
        state = QpState.RTR;
    }

    @Override
    public synchronized void readyToReceive() {
        checkOpen("readyToReceive()");
        if (type != QpType.UD) {
            throw new VerbsException("QP " + qpn + " is RC; call readyToReceive(remoteEndpoint) with the peer's QpEndpoint");
        }
        requireState(QpState.INIT, "readyToReceive()");
        state = QpState.RTR;
    }

    @Override
    public synchronized void readyToSend() {
        checkOpen("readyToSend()");
        requireState(QpState.RTR, "readyToSend()");
        state = QpState.RTS;
        ring();
    }

    @Override
    public synchronized void toError() {
        checkOpen("toError()");
        state = QpState.ERROR;
        ring();
    }

    private void requireState(QpState expected, String call) {
        if (state != expected) {
            throw new VerbsException("QP " + qpn + " is in " + state + " but " + call + " needs " + expected
                + "; transitions are RESET -> INIT -> RTR -> RTS");
        }
    }

    private void checkOpen(String what) {
        if (closed) {
            throw new VerbsException("QP " + qpn + " is closed; cannot " + what + " (create a new queue pair)");
        }
    }

    @Override
    public boolean postSend(SendWorkRequest wr) {
        // A spin lock rather than a monitor: one CAS to take it, a release store to drop it, and it is
        // only ever held for the copy into the ring (never across a blocking call).
        while (!singlePoster && !postLock.compareAndSet(false, true)) {
            Thread.onSpinWait();
        }
        try {
            checkOpen("post a send");
            QpState s = state;
            if (s != QpState.RTS && s != QpState.ERROR) {
                throw new VerbsException("QP " + qpn + " is in " + s + "; sends may be posted from RTS on "
                    + "(call readyToSend() or connect(remote))");
            }
            WrOpcode op = wr.opcode();
            SoftAddressHandle ah = null;
            if (type == QpType.UD) {
                if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
                    throw new VerbsException("UD QP " + qpn + " cannot post " + op + "; UD supports SEND and SEND_WITH_IMM only");
                }
                AddressHandle a = wr.addressHandle();
                if (a == null) {
                    throw new VerbsException("a UD send needs a destination; call wr.ud(addressHandle, remoteQpn, remoteQkey)");
                }
                if (!(a instanceof SoftAddressHandle sa) || sa.pd() != pd || sa.isClosed()) {
                    throw new VerbsException("address handle " + a + " is closed or from another protection domain; "
                        + "create it with this QP's protection domain");
                }
                ah = sa;
            }
            if (op.isAtomic()) {
                checkAtomicPost(wr);
            }
            long t = sq.tail.get();
            if (t - sq.producerCachedHead >= sq.capacity) {
                sq.producerCachedHead = sq.head.get();
                if (t - sq.producerCachedHead >= sq.capacity) {
                    return false;
                }
            }
            int slot = (int) t & sq.mask;
            int n = wr.numSge();
            if (n > sq.sgeRows) {
                sq.ensureSgeRows(n);
            }
            long total = 0;
            for (int k = 0; k < n; k++) {
                ScatterGatherEntry e = wr.sge(k);
                int len = e.length();
                if (len < 0) {
                    throw new VerbsException("SGE " + k + " of " + wr + " has negative length " + len);
                }
                total += len;
                int i = sq.sgeIndex(slot, k);
                sq.sgeAddress[i] = e.address();
                sq.sgeLength[i] = len;
                sq.sgeLkey[i] = e.lkey();
            }
            boolean inline = wr.inline();
            if (inline) {
                if (op == WrOpcode.RDMA_READ) {
                    throw new VerbsException("RDMA_READ cannot be inline: the read data lands in the SGEs; clear inline(false)");
                }
                if (total > sq.inlineStride) {
                    throw new VerbsException("inline payload of " + total + " bytes exceeds QP " + qpn + "'s maxInlineBytes "
                        + sq.inlineStride + "; send it without inline or raise maxInlineBytes");
                }
            }
            sq.numSge[slot] = n;
            sq.wrId[slot] = wr.wrId();
            sq.opcode[slot] = (byte) op.ordinal();
            sq.signaled[slot] = wr.signaled();
            boolean imm = op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE_WITH_IMM;
            sq.hasImm[slot] = imm;
            if (imm) {
                sq.imm[slot] = wr.immediate();
            }
            if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
                sq.remoteAddress[slot] = wr.remoteAddress();
                sq.rkey[slot] = wr.rkey();
            }
            if (op == WrOpcode.RDMA_READ || op.isAtomic()) {
                sq.readDone[slot] = false;
            }
            if (op.isAtomic()) {
                sq.compareAdd[slot] = wr.compareAdd();
                sq.swap[slot] = wr.swap();
            }
            if (type == QpType.UD) {
                if (sq.ah[slot] != ah) {
                    sq.ah[slot] = ah;
                }
                sq.remoteQpn[slot] = wr.remoteQpn();
                sq.remoteQkey[slot] = wr.remoteQkey();
            }
            sq.inline[slot] = inline;
            sq.error[slot] = NO_ERROR;
            if (sq.errorDetail[slot] != null) {
                sq.errorDetail[slot] = null;
            }
            if (total > MAX_MESSAGE_BYTES) {
                markError(slot, WcStatus.LOC_LEN_ERR, "message of " + total + " bytes exceeds the device limit of "
                    + MAX_MESSAGE_BYTES + " bytes");
            }
            if (op.isAtomic() && sq.error[slot] == NO_ERROR) {
                markAtomicError(slot, op, n, total, wr.remoteAddress());
            }
            sq.length[slot] = (int) Math.min(total, Integer.MAX_VALUE);
            if (wr.inline() && sq.error[slot] == NO_ERROR) {
                copyInline(slot);
            }
            sq.tail.lazySet(t + 1);
            ring();
            return true;
        } finally {
            if (!singlePoster) {
                postLock.lazySet(false);
            }
        }
    }

    /** Post-time refusals of an atomic that are programming errors (thrown, as for the other opcodes). */
    private void checkAtomicPost(SendWorkRequest wr) {
        if (!device.capabilities().atomics()) {
            throw new VerbsException("provider '" + device.provider().name() + "' offers no atomics (device '" + device.name()
                + "' capabilities: atomics=false); " + wr.opcode() + " needs a provider with atomics such as 'soft'");
        }
        if (wr.inline()) {
            throw new VerbsException(wr.opcode() + " cannot be inline: the original value lands in the SGE; clear inline(false)");
        }
    }

    /** Post-time errors of an atomic's shape, completed with a local error status and never sent. */
    private void markAtomicError(int slot, WrOpcode op, int numSge, long total, long remoteAddress) {
        if (numSge != 1 || total != Long.BYTES) {
            markError(slot, WcStatus.LOC_LEN_ERR, op + " needs exactly one SGE of 8 bytes for the original value but it has "
                + numSge + " SGE(s) of " + total + " bytes; use wr.sge(region, offset, 8)");
        } else if ((remoteAddress & (Long.BYTES - 1)) != 0) {
            markError(slot, WcStatus.LOC_QP_OP_ERR, op + " remote address 0x" + Long.toHexString(remoteAddress)
                + " is not 8-byte aligned; atomics act on aligned 8-byte words (round it down to 0x"
                + Long.toHexString(remoteAddress & ~7L) + ")");
        }
    }

    private void markError(int slot, WcStatus status, String detail) {
        sq.error[slot] = (byte) status.ordinal();
        sq.errorDetail[slot] = detail;
    }

    /** Copies an inline payload at post time: verbs lets the caller reuse the memory as soon as post returns. */
    private void copyInline(int slot) {
        ByteBuffer dst = sq.inlineData;
        int pos = slot * sq.inlineStride;
        for (int k = 0; k < sq.numSge[slot]; k++) {
            int i = sq.sgeIndex(slot, k);
            int len = sq.sgeLength[i];
            SoftMemoryRegion mr = device.lookupLocal(sq.sgeLkey[i]);
            String problem = checkLocal(mr, sq.sgeLkey[i], sq.sgeAddress[i], len, false);
            if (problem != null) {
                markError(slot, WcStatus.LOC_PROT_ERR, "inline SGE " + k + ": " + problem);
                return;
            }
            if (len > 0 && dst != null) {
                dst.put(pos, mr.base, (int) (sq.sgeAddress[i] - mr.address()), len);
            }
            pos += len;
        }
    }

    @Override
    public boolean postReceive(ReceiveWorkRequest wr) {
        checkOpen("post a receive");
        ReceiveRing ring = rq;
        if (ring == null) {
            throw new VerbsException("QP " + qpn + " uses a shared receive queue; post receives to the SRQ");
        }
        if (state == QpState.RESET) {
            throw new VerbsException("QP " + qpn + " is in RESET; receives may be posted from INIT on (call init())");
        }
        boolean posted = ring.post(wr);
        if (state == QpState.ERROR) {
            // flushed by the engine's next pass
            ring();
        }
        return posted;
    }

    SoftProtectionDomain softPd() {
        return pd;
    }

    boolean isClosed() {
        return closed;
    }

    boolean portUp() {
        return port.isUp();
    }

    /** The connected peer's route (RC, after RTR). */
    @Nullable Route route() {
        return route;
    }

    /** The connected peer's QP number (RC, after RTR). */
    int remoteQpn() {
        return remoteQpn;
    }

    /** Engine: the responder hit an error the requester is told about by NAK; this QP goes to ERROR too. */
    void responderFailed() {
        state = QpState.ERROR;
        ring();
    }

    /**
     * Rings this QP's doorbell (any thread): the device's next engine pass visits it. Costs a volatile read
     * when already rung and not yet taken.
     */
    void ring() {
        if (!doorbell && DOORBELL.compareAndSet(this, false, true)) {
            device.activeQueuePairs().rang(this);
        }
    }

    /** Engine: the doorbell was taken; a ring from now on queues this QP again. */
    void doorbellTaken() {
        if (doorbell) {
            DOORBELL.setVolatile(this, false);
        }
    }

    /** Whether the QP is closed (and off its device's lists). */
    boolean removedFromDevice() {
        return closed;
    }

    /**
     * Engine: nothing for an engine pass to do on the send side until a doorbell rings: every posted work
     * request completed, no timer running, no broken route to apply, and in ERROR nothing left to flush.
     */
    boolean quiescent() {
        if (routeBrokenReason != null || rnrWaiting || head != sq.tail.get()) {
            return false;
        }
        ReceiveRing ring = rq;
        return state != QpState.ERROR || ring == null || ring.peek() < 0;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        device.removeQp(this);
        pd.forget(this);
        SoftResources.LIVE_QUEUE_PAIRS.decrementAndGet();
    }

    @Override
    public String toString() {
        return type + " QP " + qpn + " " + state + " on " + port.address() + (remote != null ? " -> " + remote.address() + "/" + remote.qpn() : "");
    }

    // ------------------------------------------------------------------ checks

    /**
     * Null when {@code [addr, addr+len)} is usable locally through {@code lkey} (with LOCAL_WRITE
     * when {@code write}), else the reason.
     */
    @Nullable String checkLocal(@Nullable SoftMemoryRegion mr, int lkey, long addr, int len, boolean write) {
        return checkRegion(mr, false, lkey, addr, len, write ? Access.LOCAL_WRITE : 0);
    }

    /** Null when a peer may use {@code [addr, addr+len)} of this QP's memory through {@code rkey} with {@code right}, else the reason. */
    @Nullable String checkRemote(@Nullable SoftMemoryRegion mr, int rkey, long addr, int len, int right) {
        return checkRegion(mr, true, rkey, addr, len, right);
    }

    /**
     * The key, protection domain, bounds and access checks shared by local and remote access;
     * {@code right} 0 checks no access right. Strings are built only on failure.
     */
    private @Nullable String checkRegion(@Nullable SoftMemoryRegion mr, boolean remote, int key, long addr, int len, int right) {
        if (mr == null || (remote ? mr.rkey() : mr.lkey()) != key || !mr.isValid()) {
            return keyName(remote, key) + " names no registered memory region (wrong key or deregistered)";
        }
        if (mr.pd() != pd) {
            return keyName(remote, key) + " belongs to another protection domain" + (remote ? " than the responder QP's" : "");
        }
        if (!mr.contains(addr, len)) {
            return (remote ? "remote [0x" : "[0x") + Long.toHexString(addr) + ", +" + len + ") lies outside "
                + (remote ? "the" : "its") + " region [0x" + Long.toHexString(mr.address()) + ", +" + mr.length() + ")";
        }
        if (right != 0 && (mr.access() & right) == 0) {
            return "region " + keyName(remote, key) + " lacks " + Access.toString(right)
                + " (registered " + Access.toString(mr.access()) + ")";
        }
        return null;
    }

    private static String keyName(boolean remote, int key) {
        return (remote ? "rkey 0x" : "lkey 0x") + Integer.toHexString(key);
    }

    static int psnDiff(int a, int b) {
        return ((a - b) << 8) >> 8;
    }

    private int psnOf(long index) {
        return (int) ((startPsn + index) & PSN_MASK);
    }

    // ------------------------------------------------------------------ engine: requester

    /** Engine: transmit, timers, completions, flush. */
    int doSendWork(long nowNs) {
        if (routeBrokenReason != null) {
            failOnBrokenRoute();
        }
        QpState s = state;
        if (s == QpState.ERROR) {
            return flush();
        }
        if (s != QpState.RTS) {
            return 0;
        }
        return type == QpType.UD ? doUdSends(nowNs) : doRcSends(nowNs);
    }

    /**
     * Ns until this QP's next timer (the ACK retry deadline of frames sent and not acknowledged, or the
     * end of an RNR wait) needs an engine pass; {@link Long#MAX_VALUE} when none runs. Engine thread.
     */
    long timerDueInNs(long nowNs) {
        if (type == QpType.UD || state != QpState.RTS) {
            return Long.MAX_VALUE;
        }
        long due = Long.MAX_VALUE;
        if (txIndex > ackedIndex) {
            due = ackDeadlineNs - nowNs;
        }
        if (rnrWaiting) {
            due = Math.min(due, rnrWaitUntilNs - nowNs);
        }
        return due;
    }

    private int doRcSends(long nowNs) {
        int work = completeAcked();
        if (state == QpState.ERROR) {
            return work + flush();
        }
        if (txIndex > ackedIndex && nowNs - ackDeadlineNs >= 0) {
            if (++transportRetries > attributes.retryCount()) {
                failAt(ackedIndex, WcStatus.RETRY_EXC_ERR, "no acknowledgement from " + destination() + " after "
                    + attributes.retryCount() + " retries of " + retryTimeoutNs + " ns (port down or peer gone)");
                return work + 1 + flush();
            }
            txIndex = ackedIndex;
            ackDeadlineNs = nowNs + retryTimeoutNs;
            device.rcRetransmits++;
            work++;
        }
        if (rnrWaiting) {
            if (nowNs - rnrWaitUntilNs < 0) {
                return work;
            }
            rnrWaiting = false;
        }
        return work + transmit(nowNs);
    }

    /**
     * Engine, at the start of a pass (the doorbell): transmits RC work requests posted since the
     * last pass before the transport is polled, so a request posted between passes leaves without
     * waiting behind the poll (on the IP fabric a system call). Only new work in RTS with no RNR
     * wait or route failure pending; timers, completions and retransmission stay with
     * {@link #doSendWork}, later in the same pass.
     */
    int transmitPosted(long nowNs) {
        if (type != QpType.RC || txIndex != highestTx || rnrWaiting || routeBrokenReason != null || state != QpState.RTS
            || txIndex >= sq.tail.get()) {
            return 0;
        }
        return transmit(nowNs);
    }

    /** Transmits posted work requests from {@code txIndex} on while the rail takes them. */
    private int transmit(long nowNs) {
        int work = 0;
        long tail = sq.tail.get();
        Route r = route;
        RailConfig rail = port.engineRail();
        boolean unshaped = rail.isUnshaped();
        boolean up = port.isUp();
        long deadlineAfterArrivalNs = rail.latencyNs() + retryTimeoutNs;
        FrameTransport.Attachment transport = device.attachment();
        RcFaults faults = port.rcFaults();
        while (txIndex < tail) {
            int slot = (int) txIndex & sq.mask;
            if (sq.error[slot] != NO_ERROR) {
                if (txIndex == ackedIndex) {
                    failAt(txIndex, WC_STATUSES[sq.error[slot]], sq.errorDetail[slot]);
                    return work + 1 + flush();
                }
                break;
            }
            if (!unshaped && !port.mayTransmit(nowNs)) {
                break;
            }
            WrOpcode op = WR_OPCODES[sq.opcode[slot]];
            boolean atomic = op.isAtomic();
            if (atomic && atomicsUnanswered() >= SoftAtomics.DEPTH) {
                break;
            }
            boolean responded = atomic || op == WrOpcode.RDMA_READ;
            SoftFrame f = device.claimFrame();
            if (!responded ? !gather(slot, f) : !checkReadTargets(slot)) {
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
            if (WR_OPCODES[sq.opcode[(int) i & sq.mask]].isAtomic()) {
                n++;
            }
        }
        return n;
    }

    private @Nullable String destination() {
        return remote == null ? "(unconnected)" : remote.address() + " QP " + remote.qpn();
    }

    /** Checks a slot's SGEs at transmit; marks the slot with LOC_PROT_ERR when one is bad. */
    private void validateSges(int slot, boolean write) {
        for (int k = 0; k < sq.numSge[slot]; k++) {
            int i = sq.sgeIndex(slot, k);
            String problem = checkLocal(device.lookupLocal(sq.sgeLkey[i]), sq.sgeLkey[i], sq.sgeAddress[i], sq.sgeLength[i], write);
            if (problem != null) {
                markError(slot, WcStatus.LOC_PROT_ERR, "SGE " + k + ": " + problem);
                return;
            }
        }
    }

    /** RDMA READ and atomics: the local SGEs receive data, so they need LOCAL_WRITE. */
    private boolean checkReadTargets(int slot) {
        validateSges(slot, true);
        return sq.error[slot] == NO_ERROR;
    }

    /**
     * Puts a slot's payload into the frame's gather list, checking each SGE (one key lookup per SGE);
     * on a bad SGE marks the slot LOC_PROT_ERR and returns false.
     */
    private boolean gather(int slot, SoftFrame f) {
        if (sq.inline[slot]) {
            if (sq.length[slot] > 0) {
                f.addPayload(sq.inlineData, slot * sq.inlineStride, sq.length[slot]);
            }
            return true;
        }
        for (int k = 0; k < sq.numSge[slot]; k++) {
            int i = sq.sgeIndex(slot, k);
            int len = sq.sgeLength[i];
            int lkey = sq.sgeLkey[i];
            long addr = sq.sgeAddress[i];
            SoftMemoryRegion mr = device.lookupLocal(lkey);
            if (mr == null || mr.lkey() != lkey || !mr.isValid() || mr.pd() != pd || !mr.contains(addr, len)) {
                markError(slot, WcStatus.LOC_PROT_ERR, "SGE " + k + ": " + checkLocal(mr, lkey, addr, len, false));
                return false;
            }
            if (len > 0) {
                f.addPayload(mr.base, (int) (addr - mr.address()), len, addr);
            }
        }
        return true;
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
                WrOpcode op = WR_OPCODES[sq.opcode[slot]];
                sendCq.add(sq.wrId[slot], WcStatus.SUCCESS, wcOpcode(op), sq.length[slot], false, 0, qpn, 0, "");
            }
            head++;
            n++;
        }
        if (n > 0) {
            sq.head.lazySet(head);
        }
        return n;
    }

    private static FrameType[] frameTypes() {
        FrameType[] t = new FrameType[WR_OPCODES.length];
        for (WrOpcode op : WR_OPCODES) {
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

    private static WcOpcode wcOpcode(WrOpcode op) {
        return switch (op) {
            case SEND, SEND_WITH_IMM -> WcOpcode.SEND;
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
            case ATOMIC_FETCH_AND_ADD -> WcOpcode.FETCH_ADD;
            case ATOMIC_CMP_AND_SWP -> WcOpcode.COMP_SWAP;
        };
    }

    private void failAt(long index, WcStatus status, @Nullable String detail) {
        errorIndex = index;
        errorStatus = status;
        errorDetail = detail == null ? status.name() : detail;
        flushDetail = "flushed: QP " + qpn + " is in ERROR after " + status + ": " + errorDetail;
        state = QpState.ERROR;
    }

    /** Engine, in ERROR: completes everything outstanding (see the class Javadoc). */
    private int flush() {
        int n = 0;
        long tail = sq.tail.get();
        while (head < tail) {
            int slot = (int) head & sq.mask;
            WcStatus st;
            String detail;
            if (head < ackedIndex) {
                st = WcStatus.SUCCESS;
                detail = "";
            } else if (head == errorIndex) {
                st = errorStatus;
                detail = errorDetail;
            } else {
                st = WcStatus.WR_FLUSH_ERR;
                detail = flushDetail != null ? flushDetail : "flushed: QP " + qpn + " is in ERROR";
            }
            if (st != WcStatus.SUCCESS || sq.signaled[slot]) {
                if (!sendCq.hasRoom()) {
                    break;
                }
                sendCq.add(sq.wrId[slot], st, wcOpcode(WR_OPCODES[sq.opcode[slot]]), sq.length[slot], false, 0, qpn, 0, detail);
            }
            if (sq.ah[slot] != null) {
                sq.ah[slot] = null;
            }
            head++;
            n++;
        }
        if (n > 0) {
            sq.head.lazySet(head);
        }
        txIndex = Math.max(txIndex, head);
        ackedIndex = Math.max(ackedIndex, head);
        ReceiveRing ring = rq;
        if (ring != null) {
            int slot;
            while ((slot = ring.peek()) >= 0 && receiveCq.hasRoom()) {
                receiveCq.add(ring.wrIds[slot], WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpn, 0,
                    flushDetail != null ? flushDetail : "flushed: QP " + qpn + " is in ERROR");
                ring.consume();
                n++;
            }
        }
        return n;
    }

    private int doUdSends(long nowNs) {
        long tail = sq.tail.get();
        int n = 0;
        while (txIndex < tail) {
            int slot = (int) txIndex & sq.mask;
            if (sq.error[slot] == NO_ERROR && !sq.inline[slot]) {
                validateSges(slot, false);
            }
            int len = sq.length[slot];
            int mtu = port.engineRail().mtuBytes();
            if (sq.error[slot] == NO_ERROR && len > mtu) {
                markError(slot, WcStatus.LOC_LEN_ERR, "UD datagram of " + len + " bytes exceeds the port MTU of " + mtu
                    + " bytes; fragment it");
            }
            boolean error = sq.error[slot] != NO_ERROR;
            if ((error || sq.signaled[slot]) && !sendCq.hasRoom()) {
                break;
            }
            if (!error) {
                if (!port.mayTransmit(nowNs)) {
                    break;
                }
                transmitDatagram(slot, len, nowNs);
            }
            if (error) {
                sendCq.add(sq.wrId[slot], WC_STATUSES[sq.error[slot]], WcOpcode.SEND, len, false, 0, qpn, 0, sq.errorDetail[slot]);
            } else if (sq.signaled[slot]) {
                sendCq.add(sq.wrId[slot], WcStatus.SUCCESS, WcOpcode.SEND, len, false, 0, qpn, 0, "");
            }
            sq.ah[slot] = null;
            txIndex++;
            n++;
        }
        if (n > 0) {
            head = txIndex;
            ackedIndex = txIndex;
            sq.head.lazySet(head);
        }
        return n;
    }

    private void transmitDatagram(int slot, int len, long nowNs) {
        long arrival = port.depart(nowNs, len);
        SoftAddressHandle ah = sq.ah[slot];
        if (!port.isUp() || ah == null || port.udLost(nowNs, len)) {
            return;
        }
        SoftFrame f = device.claimFrame();
        f.type = FrameType.UD_SEND;
        f.route = ah.route;
        f.sourceQpn = qpn;
        f.destinationQpn = sq.remoteQpn[slot];
        f.qkey = sq.remoteQkey[slot];
        f.hasImmediate = sq.hasImm[slot];
        f.immediate = sq.imm[slot];
        f.length = len;
        f.sentAtNs = nowNs;
        ByteBuffer own = f.ownPayload(len);
        int pos = 0;
        if (sq.inline[slot]) {
            if (len > 0) {
                own.put(0, sq.inlineData, slot * sq.inlineStride, len);
            }
        } else {
            for (int k = 0; k < sq.numSge[slot]; k++) {
                int i = sq.sgeIndex(slot, k);
                int l = sq.sgeLength[i];
                if (l > 0) {
                    SoftMemoryRegion mr = device.lookupLocal(sq.sgeLkey[i]);
                    own.put(pos, mr.base, (int) (sq.sgeAddress[i] - mr.address()), l);
                }
                pos += l;
            }
        }
        if (len > 0) {
            f.addPayload(own, 0, len);
        }
        int corrupt = port.udCorruptOffset(len);
        if (corrupt >= 0) {
            own.put(corrupt, (byte) (own.get(corrupt) ^ 0x5A));
        }
        boolean reorder = port.udReorder();
        f.deliverAtNs = reorder ? arrival + port.engineRail().reorderDelayNs() : device.monotoneArrival(port, arrival);
        SoftFrame dup = port.udDuplicate() ? device.claimFrame() : null;
        if (dup != null) {
            dup.copyFrom(f);
            dup.deliverAtNs = device.monotoneArrival(port, arrival);
        }
        device.attachment().transmit(f);
        if (dup != null) {
            device.attachment().transmit(dup);
        }
    }

    // ------------------------------------------------------------------ engine: inbound

    /** Engine: a response (ACK, NAK, READ response) for this QP as requester. */
    void onResponse(SoftFrame f, long nowNs) {
        if (state != QpState.RTS || type != QpType.RC || f.sourceQpn != remoteQpn) {
            return;
        }
        long index = head + psnDiff(f.psn, psnOf(head));
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
                String problem = scatterReadResponse(slot, f);
                if (problem != null) {
                    failAt(index, WcStatus.LOC_PROT_ERR, problem);
                    return;
                }
                sq.readDone[slot] = true;
                progress(index + 1, nowNs);
            }
            case ATOMIC_RESPONSE -> {
                int slot = (int) index & sq.mask;
                if (!WR_OPCODES[sq.opcode[slot]].isAtomic() || !SoftAtomics.hasPayload(f, SoftAtomics.RESPONSE_BYTES)) {
                    return;
                }
                acknowledge(index, nowNs);
                if (ackedIndex < index) {
                    // an earlier READ's or atomic's response is missing: as for a READ response
                    goBackN(nowNs);
                    return;
                }
                String problem = placeAtomicResult(slot, SoftAtomics.payloadLong(f, 0));
                if (problem != null) {
                    failAt(index, WcStatus.LOC_PROT_ERR, problem);
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
                        failAt(index, WcStatus.RNR_RETRY_EXC_ERR, "receiver not ready: " + destination()
                            + " had no receive posted after " + limit + " RNR retries of " + attributes.rnrTimeoutNs() + " ns");
                        return;
                    }
                    // from the NAKed request, or from an earlier READ still missing its response
                    txIndex = ackedIndex;
                    rnrWaitUntilNs = nowNs + attributes.rnrTimeoutNs();
                    rnrWaiting = true;
                    ackDeadlineNs = rnrWaitUntilNs + retryTimeoutNs;
                } else {
                    failAt(index, f.status, "responder " + destination() + " answered " + f.status
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
            case REM_INV_REQ_ERR -> WR_OPCODES[sq.opcode[slot]].isAtomic()
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
            WrOpcode op = WR_OPCODES[sq.opcode[slot]];
            if ((op == WrOpcode.RDMA_READ || op.isAtomic()) && !sq.readDone[slot]) {
                break;
            }
            i++;
        }
        progress(i, nowNs);
    }

    /**
     * Engine: go-back-N on a NAK - PSN sequence error or a READ response gap, without waiting for the
     * ACK timer: transmission rewinds to the oldest unacknowledged request. Counted against
     * {@code retryCount} like a timeout (the count restarts with every forward progress). At most one
     * such rewind per oldest unacknowledged request: the responder NAKs a gap once, so a second NAK for
     * it is a stale or duplicated one, and a second READ gap a consequence of the first; if the
     * retransmission is lost too, the ACK timer recovers.
     */
    private void goBackN(long nowNs) {
        if (txIndex <= ackedIndex || ackedIndex == lastNakRewindIndex) {
            return;
        }
        lastNakRewindIndex = ackedIndex;
        if (++transportRetries > attributes.retryCount()) {
            failAt(ackedIndex, WcStatus.RETRY_EXC_ERR, "no progress with " + destination() + " after "
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

    /** Writes an atomic's original value into its 8-byte SGE; null, or why the SGE cannot take it. */
    private @Nullable String placeAtomicResult(int slot, long original) {
        int i = sq.sgeIndex(slot, 0);
        SoftMemoryRegion mr = device.lookupLocal(sq.sgeLkey[i]);
        String problem = checkLocal(mr, sq.sgeLkey[i], sq.sgeAddress[i], Long.BYTES, true);
        if (problem != null) {
            return WR_OPCODES[sq.opcode[slot]] + " result SGE: " + problem;
        }
        SoftAtomics.putNative(mr.base, (int) (sq.sgeAddress[i] - mr.address()), original);
        return null;
    }

    private @Nullable String scatterReadResponse(int slot, SoftFrame f) {
        SoftDevice.Scratch s = device.scratch;
        int count = 0;
        for (int k = 0; k < sq.numSge[slot]; k++) {
            int i = sq.sgeIndex(slot, k);
            SoftMemoryRegion mr = device.lookupLocal(sq.sgeLkey[i]);
            String problem = checkLocal(mr, sq.sgeLkey[i], sq.sgeAddress[i], sq.sgeLength[i], true);
            if (problem != null) {
                return "RDMA READ target SGE " + k + ": " + problem;
            }
            s.buffers[count] = mr.base;
            s.addresses[count] = sq.sgeAddress[i];
            s.lengths[count] = sq.sgeLength[i];
            count++;
        }
        int len = Math.min(f.length, sq.length[slot]);
        NativeMemory.scatter(f, s.addresses, s.lengths, count, len);
        return null;
    }

    /**
     * Engine: the transport says this QP's route can no longer carry frames. Recorded here and
     * applied by the next {@link #doSendWork} rather than at once, because the transport may call
     * while this QP is in the middle of transmitting.
     */
    void routeBroken(String reason) {
        if (routeBrokenReason == null) {
            routeBrokenReason = reason;
        }
        ring();
    }

    private void failOnBrokenRoute() {
        String reason = routeBrokenReason;
        routeBrokenReason = null;
        QpState s = state;
        if (type != QpType.RC || s == QpState.ERROR || s == QpState.RESET || s == QpState.INIT) {
            return;
        }
        if (sq.tail.get() > ackedIndex) {
            failAt(ackedIndex, WcStatus.RETRY_EXC_ERR, reason + "; no retry can reach " + destination());
        } else {
            // no send to carry the reason: the flushed receives say it, else an idle QP's user sees a bare flush
            flushDetail = "flushed: QP " + qpn + " is in ERROR: " + reason + "; no retry can reach " + destination();
            state = QpState.ERROR;
        }
    }

    /** Engine: moves the QP to ERROR because one of its CQs overran. */
    void cqOverrun() {
        state = QpState.ERROR;
        ring();
    }

    boolean usesCq(SoftCompletionQueue cq) {
        return sendCq == cq || receiveCq == cq;
    }
}
