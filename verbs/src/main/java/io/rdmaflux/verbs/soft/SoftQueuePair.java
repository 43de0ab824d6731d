package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import org.jspecify.annotations.Nullable;

/**
 * A soft queue pair: the verbs QP semantics of the soft NIC, independent of how frames travel. This
 * class holds the QP's identity, its state machine (RESET -> INIT -> RTR -> RTS, and ERROR), its
 * connection and its doorbell, and is where the NIC's engine calls in; the work is done by:
 * <ul>
 *   <li>{@link SendPoster}: posting to the send queue (a {@link SendRing}, grown on demand), any thread;</li>
 *   <li>{@link RcRequester} (RC) or {@link UdSender} (UD): the engine side of the send queue;</li>
 *   <li>{@link SoftResponder} ({@link #responder}): the receiving side, RC responder and UD receiver;</li>
 *   <li>{@link SendSges} and {@link RegionCheck}: the local memory of send work requests and the
 *       protection checks;</li>
 *   <li>{@link ErrorFlush}: the error record and the flush of both queues in ERROR.</li>
 * </ul>
 *
 * <p>Thread-safety: the verbs calls from any thread (state transitions under this QP's monitor, posts
 * as {@link SendPoster} says); the package-private engine methods on the NIC's engine thread only,
 * except {@link #ring}.
 */
final class SoftQueuePair implements QueuePair {
    static final int PSN_MASK = 0xFFFFFF;
    private static final java.lang.invoke.VarHandle DOORBELL;

    static {
        try {
            DOORBELL = java.lang.invoke.MethodHandles.lookup().findVarHandle(SoftQueuePair.class, "doorbell", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SoftDevice device;
    private final SoftProtectionDomain pd;
    private final QpInitAttributes attributes;
    private final QpType type;
    private final SoftPort port;
    final int qpn;
    final SoftCompletionQueue sendCq;
    final SoftCompletionQueue receiveCq;
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

    private final SendPoster poster;
    /** The send queue's storage (tests: it grows on demand). */
    final SendRing sendQueue;
    /** The send side in the engine: exactly one of the two, by {@link #type}. */
    private final @Nullable RcRequester rc;
    private final @Nullable UdSender ud;

    /** The receiving side of this QP (RC responder, UD receiver). */
    final SoftResponder responder;

    SoftQueuePair(SoftDevice device, SoftProtectionDomain pd, QpInitAttributes a, @Nullable SoftSharedReceiveQueue srq, int qpn) {
        this.device = device;
        this.pd = pd;
        this.attributes = a;
        this.type = a.type();
        this.port = (SoftPort) a.port();
        this.qpn = qpn;
        this.sendCq = (SoftCompletionQueue) a.sendCq();
        this.receiveCq = (SoftCompletionQueue) a.receiveCq();
        boolean singlePoster = device.provider().threadDomain();
        this.rq = srq == null ? new ReceiveRing(a.maxReceiveWr(), singlePoster) : null;
        this.startPsn = (qpn * 0x9E3779B1) & PSN_MASK;
        SendRing sq = new SendRing(a.maxSendWr(), a.maxInlineBytes());
        this.sendQueue = sq;
        SendSges sges = new SendSges(device, pd, sq);
        ErrorFlush errors = new ErrorFlush(this, sq, rq);
        this.poster = new SendPoster(this, device, pd, sq, sges, singlePoster);
        // the transport timeout in force: the attribute, raised to the provider's floor
        long retryTimeoutNs = Math.max(a.retryTimeoutNs(), device.provider().minRetryTimeoutNs());
        this.rc = type == QpType.RC ? new RcRequester(this, device, port, sq, sges, errors, retryTimeoutNs, startPsn) : null;
        this.ud = type == QpType.UD ? new UdSender(this, device, port, sq, sges, errors) : null;
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
        return poster.post(wr);
    }

    /** Throws unless a send may be posted now (open, and in RTS or ERROR); {@link SendPoster}, under its lock. */
    void checkSendPostable() {
        checkOpen("post a send");
        QpState s = state;
        if (s != QpState.RTS && s != QpState.ERROR) {
            throw new VerbsException("QP " + qpn + " is in " + s + "; sends may be posted from RTS on "
                + "(call readyToSend() or connect(remote))");
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
        RcRequester r = rc;
        if (!(r != null ? r.idle() : ud.idle())) {
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
        device.resources().removeQp(this);
        pd.forget(this);
        SoftResources.LIVE_QUEUE_PAIRS.decrementAndGet();
    }

    @Override
    public String toString() {
        return type + " QP " + qpn + " " + state + " on " + port.address() + (remote != null ? " -> " + remote.address() + "/" + remote.qpn() : "");
    }

    static int psnDiff(int a, int b) {
        return ((a - b) << 8) >> 8;
    }

    /** The peer, for error details. */
    String destination() {
        return remote == null ? "(unconnected)" : remote.address() + " QP " + remote.qpn();
    }

    /** Engine: a failure recorded in {@link ErrorFlush} moves the QP to ERROR (the engine is already on it: no doorbell). */
    void enterError() {
        state = QpState.ERROR;
    }

    // ------------------------------------------------------------------ engine

    /** Engine: transmit, timers, completions, flush. */
    int doSendWork(long nowNs) {
        RcRequester r = rc;
        if (r != null && r.routeBrokenPending()) {
            r.applyRouteBroken(state);
        }
        QpState s = state;
        if (s == QpState.ERROR) {
            return r != null ? r.flush() : ud.flush();
        }
        if (s != QpState.RTS) {
            return 0;
        }
        return r != null ? r.doSends(nowNs) : ud.doSends(nowNs);
    }

    /**
     * Ns until this QP's next timer (the ACK retry deadline of frames sent and not acknowledged, or the
     * end of an RNR wait) needs an engine pass; {@link Long#MAX_VALUE} when none runs. Engine thread.
     */
    long timerDueInNs(long nowNs) {
        RcRequester r = rc;
        if (r == null || state != QpState.RTS) {
            return Long.MAX_VALUE;
        }
        return r.timerDueInNs(nowNs);
    }

    /**
     * Engine, at the start of a pass (the doorbell): transmits RC work requests posted since the
     * last pass before the transport is polled, so a request posted between passes leaves without
     * waiting behind the poll (on the IP fabric a system call). Only new work in RTS with no RNR
     * wait or route failure pending; timers, completions and retransmission stay with
     * {@link #doSendWork}, later in the same pass.
     */
    int transmitPosted(long nowNs) {
        RcRequester r = rc;
        if (r == null || state != QpState.RTS) {
            return 0;
        }
        return r.transmitPosted(nowNs);
    }

    /** Engine: a response (ACK, NAK, READ or atomic response) for this QP as requester. */
    void onResponse(SoftFrame f, long nowNs) {
        RcRequester r = rc;
        if (r == null || state != QpState.RTS || f.sourceQpn != remoteQpn) {
            return;
        }
        r.onResponse(f, nowNs);
    }

    /**
     * Engine: the transport says this QP's route can no longer carry frames. Recorded here and
     * applied by the next {@link #doSendWork} rather than at once, because the transport may call
     * while this QP is in the middle of transmitting.
     */
    void routeBroken(String reason) {
        RcRequester r = rc;
        if (r != null) {
            r.routeBroken(reason);
        }
        ring();
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
