package io.rdmaflux.verbs.disni;

import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvWC;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * An RC queue pair of the {@code disni} provider. The SPI's states are kept here; the native QP is
 * created by the CM exchange ({@link QpConnection}) and its work requests go through stateful verb calls
 * ({@link SendPoster}, {@link ReceivePoster}).
 *
 * <ul>
 *   <li>RESET → INIT ({@link #init()}): receives may be posted; they are held until the native QP exists
 *       (created when the CM exchange reaches route resolution or a connect request), then posted.</li>
 *   <li>INIT → RTR ({@link #readyToReceive(QpEndpoint)}): starts the CM exchange with the peer's endpoint.</li>
 *   <li>RTR → RTS ({@link #readyToSend()}): sends may be posted; they are held (copied; inline payloads
 *       into a staging region, so the caller may reuse its buffer at once) until the connection is
 *       ESTABLISHED, then posted in order.</li>
 *   <li>ERROR: a failed exchange, an error completion, a CQ overrun or {@link #toError()}. Without a native
 *       QP, held and newly posted work requests complete with WR_FLUSH_ERR at once (a failed exchange
 *       fails the first held send with RETRY_EXC_ERR, naming why); with one, {@code rdma_disconnect} moves it
 *       to ERROR and the NIC flushes them, in order.</li>
 * </ul>
 *
 * <p>Native send wr_ids are the sequence number of the post, so a completion (including an error
 * completion, whose opcode verbs leaves undefined, and a signaled completion that retires the unsignaled
 * ones before it) leads back to the caller's id and opcode; receives carry {@link DisniDevice#RECV_TAG}.
 * The QP number is the provider's (the native one exists only after the CM exchange).
 *
 * <p><b>Concurrency:</b> thread-safe; posting takes this QP's lock only; state changes take the CM lock,
 * then this one.
 */
final class DisniQueuePair implements QueuePair {
    private final DisniProtectionDomain pd;
    private final DisniDevice device;
    private final QpInitAttributes attributes;
    private final DisniCompletionQueue sendCq;
    private final DisniCompletionQueue recvCq;
    private final CmEvents cm;
    private final int qpn;
    private final QpConnection connection;
    private final SendQueue sendQueue;
    private final ReceiveQueue receiveQueue;

    private final long heldDeadlineNs;
    private long heldSinceNs = -1;
    private QpState state = QpState.RESET;
    private boolean closed;
    private boolean established;
    private RdmaSeam.@Nullable Qp nativeQp;
    private int nativeQpn = -1;
    private @Nullable SendPoster sends;
    private @Nullable ReceivePoster recvs;

    DisniQueuePair(DisniProtectionDomain pd, QpInitAttributes attributes) {
        this.pd = pd;
        this.device = pd.disniDevice();
        this.attributes = attributes;
        this.sendCq = (DisniCompletionQueue) attributes.sendCq();
        this.recvCq = (DisniCompletionQueue) attributes.receiveCq();
        this.cm = device.provider().cm();
        this.qpn = device.nextQpNumber();
        this.sendQueue = new SendQueue(pd, sendCq, qpn, attributes.maxSendWr(), attributes.maxInlineBytes());
        this.receiveQueue = new ReceiveQueue(recvCq, qpn, attributes.maxReceiveWr());
        this.heldDeadlineNs = 3L * device.provider().options().cmTimeoutMs() * 1_000_000L
            + (attributes.retryCount() + 1L) * attributes.retryTimeoutNs();
        device.reserveCqEntries(attributes.maxSendWr() + attributes.maxReceiveWr());
        try {
            synchronized (cm.lock) {
                device.provider().checkOpen();
                this.connection = new QpConnection(this, cm, device.ip(), device.provider().options().cmTimeoutMs());
            }
        } catch (RuntimeException e) {
            device.releaseCqEntries(attributes.maxSendWr() + attributes.maxReceiveWr());
            throw e;
        }
        sendCq.addUser(this);
        recvCq.addUser(this);
        device.add(this);
    }

    @Override
    public int qpNumber() {
        return qpn;
    }

    @Override
    public QpType type() {
        return QpType.RC;
    }

    @Override
    public synchronized QpState state() {
        return state;
    }

    @Override
    public Port port() {
        return attributes.port();
    }

    @Override
    public QpInitAttributes attributes() {
        return attributes;
    }

    @Override
    public QpEndpoint localEndpoint() {
        return new QpEndpoint(connection.address(), qpn, 0, port().mtuBytes());
    }

    /** The CM side of this QP (tests look at its phase and role). */
    QpConnection connection() {
        return connection;
    }

    /** The stateful verb calls built for this QP so far (sends + receives). */
    synchronized long verbCallsBuilt() {
        return (sends == null ? 0 : sends.builds()) + (recvs == null ? 0 : recvs.builds());
    }

    private void checkOpen() {
        if (closed) {
            throw new VerbsException("QP " + qpn + " is closed");
        }
    }

    private VerbsException wrongState(String transition) {
        return new VerbsException("QP " + qpn + " is in " + state + "; " + transition);
    }

    // ------------------------------------------------------------------ state machine

    @Override
    public void init() {
        synchronized (cm.lock) {
            synchronized (this) {
                checkOpen();
                if (state != QpState.RESET) {
                    throw wrongState("init() moves RESET → INIT");
                }
                state = QpState.INIT;
            }
        }
    }

    @Override
    public void readyToReceive(QpEndpoint remote) {
        synchronized (cm.lock) {
            synchronized (this) {
                checkOpen();
                if (state != QpState.INIT) {
                    throw wrongState("readyToReceive(remote) moves INIT → RTR");
                }
                state = QpState.RTR;
                try {
                    connection.start(localEndpoint(), remote);
                } catch (VerbsException e) {
                    state = QpState.INIT;
                    throw e;
                }
            }
        }
    }

    @Override
    public void readyToReceive() {
        throw new VerbsException("QP " + qpn + " is RC: readyToReceive needs the remote endpoint, readyToReceive(peer.localEndpoint())");
    }

    @Override
    public void readyToSend() {
        synchronized (cm.lock) {
            synchronized (this) {
                checkOpen();
                if (state != QpState.RTR) {
                    throw wrongState("readyToSend() moves RTR → RTS");
                }
                state = QpState.RTS;
                if (established) {
                    flushHeldSends();
                }
            }
        }
    }

    @Override
    public void toError() {
        toError("moved to ERROR by toError()");
    }

    /** Moves the QP to ERROR for {@code reason} (toError, CQ overrun); no-op when closed or in ERROR. */
    void toError(String reason) {
        synchronized (cm.lock) {
            synchronized (this) {
                if (closed || state == QpState.ERROR) {
                    return;
                }
                state = QpState.ERROR;
                flushHeld(null);
                if (established) {
                    connection.disconnect();
                }
            }
        }
    }

    /** The CM created the connection's id: create the native QP on it and post the held receives. */
    void createNativeQp(RdmaSeam.CmId id) throws IOException {
        IbvQPInitAttr a = new IbvQPInitAttr();
        a.setQp_type(NativeCodes.QPT_RC);
        a.setSq_sig_all((byte) 0);
        a.cap().setMax_send_wr(attributes.maxSendWr());
        a.cap().setMax_recv_wr(attributes.maxReceiveWr());
        a.cap().setMax_send_sge(SendWorkRequest.MAX_SGE);
        a.cap().setMax_recv_sge(ReceiveWorkRequest.MAX_SGE);
        a.cap().setMax_inline_data(attributes.maxInlineBytes());
        RdmaSeam.QpTimers timers = new RdmaSeam.QpTimers(attributes.retryCount(), attributes.retryTimeoutNs(),
            attributes.rnrRetryCount(), attributes.rnrTimeoutNs());
        RdmaSeam.Qp q = id.createQp(pd.nativePd(), device.completions().nativeCq(), a, timers);
        int n = q.qpNum();
        device.completions().register(n, this);
        synchronized (this) {
            nativeQp = q;
            nativeQpn = n;
            sends = new SendPoster(q);
            ReceivePoster r = new ReceivePoster(q, attributes.maxReceiveWr());
            recvs = r;
            receiveQueue.postHeld(r);
        }
    }

    /** The CM exchange completed (CM lock held). */
    void onEstablished() {
        synchronized (this) {
            established = true;
            if (closed) {
                return;
            }
            if (state == QpState.RTS || state == QpState.ERROR) {
                flushHeldSends();
            }
            if (state == QpState.ERROR) {
                connection.disconnect();
            }
        }
    }

    /** The CM exchange failed (CM lock held): ERROR; the first held send fails with RETRY_EXC_ERR naming why. */
    void onConnectionFailed(String reason) {
        synchronized (this) {
            if (closed) {
                return;
            }
            state = QpState.ERROR;
            flushHeld(reason);
            connection.disconnect();
        }
    }

    private void flushHeldSends() {
        SendPoster s = sends;
        if (s == null) {
            return;
        }
        try {
            sendQueue.postHeld(s);
        } catch (IOException e) {
            state = QpState.ERROR;
            flushHeld("ibv_post_send of a held send failed: " + e.getMessage());
            connection.disconnect();
        }
    }

    /** Completes every held work request: WR_FLUSH_ERR, the first send RETRY_EXC_ERR when {@code failure} is given. */
    private void flushHeld(@Nullable String failure) {
        sendQueue.failHeld(failure);
        receiveQueue.failHeld();
    }

    /**
     * Fails the held sends of a connection that has not come within {@code 3 × cmTimeoutMs + (retryCount
     * + 1) × retryTimeoutNs} of the first pass that saw them held (a peer that never connects: on a NIC
     * such sends would fail RETRY_EXC_ERR too). Called by the provider with the CM lock held.
     *
     * @return 1 if it failed them, else 0
     */
    int expireHeldSends(long nowNs) {
        synchronized (this) {
            if (closed || established || state != QpState.RTS || !sendQueue.holding()) {
                heldSinceNs = -1;
                return 0;
            }
            if (heldSinceNs < 0) {
                heldSinceNs = nowNs;
                return 0;
            }
            if (nowNs - heldSinceNs < heldDeadlineNs) {
                return 0;
            }
            heldSinceNs = -1;
        }
        connection.giveUp("no connection from " + connection.remoteAddress() + " within " + heldDeadlineNs / 1_000_000
            + " ms of holding sends for it: the peer never connected (is it alive, and did it connect its QP to this QP's endpoint "
            + localEndpoint().address() + "?)");
        return 1;
    }

    // ------------------------------------------------------------------ posting

    /**
     * Why this provider posts no atomics ({@code DeviceCapabilities.atomics} false): DiSNI 2.0's stateful
     * post-send call writes only the {@code rdma} member of {@code ibv_send_wr}'s {@code wr} union
     * ({@code NatIbvSendWR.writeBack}: remote_addr and rkey at the union's start), and its {@code SendWRMod}
     * has no atomic view, so {@code compare_add} and {@code swap} (and the atomic rkey's offset) never reach
     * {@code ibv_post_send}.
     */
    static final String NO_ATOMICS = "provider 'disni' offers no atomics (DeviceCapabilities.atomics=false): DiSNI 2.0's "
        + "post-send call serializes only the rdma member of ibv_send_wr's union (NatIbvSendWR.writeBack), so compare_add and swap "
        + "would never reach the NIC; use the 'soft' or 'ucx' provider for ATOMIC_FETCH_AND_ADD / ATOMIC_CMP_AND_SWP";

    @Override
    public synchronized boolean postSend(SendWorkRequest wr) {
        return postSendLocked(wr);
    }

    private boolean postSendLocked(SendWorkRequest wr) {
        checkOpen();
        if (state != QpState.RTS && state != QpState.ERROR) {
            throw wrongState("sends may be posted in RTS; call readyToSend() (or connect) first");
        }
        if (wr.opcode().isAtomic()) {
            throw new VerbsException(NO_ATOMICS);
        }
        if (wr.inline() && wr.totalLength() > attributes.maxInlineBytes()) {
            throw new VerbsException("inline send of " + wr.totalLength() + " bytes exceeds the QP's maxInlineBytes "
                + attributes.maxInlineBytes() + "; send it without inline(true), or create the QP with a larger maxInlineBytes");
        }
        if (state == QpState.ERROR && !established) {
            // no connected native QP to flush it: complete it here (what the NIC would report)
            sendCq.add(wr.wrId(), WcStatus.WR_FLUSH_ERR, NativeCodes.sendCompletionOpcode(wr.opcode()), 0, false, 0, qpn,
                "flushed: QP " + qpn + " is in ERROR");
            return true;
        }
        if (sendQueue.full()) {
            return false;
        }
        if (!established && sendQueue.needsStaging(wr)) {
            // lock order QP, then PD: the PD never calls into a QP while holding its lock
            sendQueue.adoptStaging(sendQueue.newStagingRegion());
        }
        try {
            sendQueue.post(wr, established ? sends : null);
        } catch (IOException e) {
            throw new VerbsException("ibv_post_send on QP " + qpn + " failed: " + e.getMessage(), e);
        }
        return true;
    }

    @Override
    public boolean postReceive(ReceiveWorkRequest wr) {
        synchronized (this) {
            checkOpen();
            if (state == QpState.RESET) {
                throw wrongState("receives may be posted from INIT on; call init() (or connect) first");
            }
            if (state == QpState.ERROR && nativeQp == null) {
                recvCq.add(wr.wrId(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpn, "flushed: QP " + qpn + " is in ERROR");
                return true;
            }
            if (receiveQueue.full()) {
                return false;
            }
            try {
                receiveQueue.post(wr, recvs);
            } catch (IOException e) {
                throw new VerbsException("ibv_post_recv on QP " + qpn + " failed: " + e.getMessage(), e);
            }
            return true;
        }
    }

    // ------------------------------------------------------------------ completions

    /** Maps one native completion of this QP onto its SPI CQ (device completions lock held). */
    void onNativeCompletion(IbvWC wc) {
        synchronized (this) {
            if (closed) {
                return;
            }
            long id = wc.getWr_id();
            int nativeStatus = wc.getStatus();
            WcStatus status = NativeCodes.status(nativeStatus);
            boolean ok = status == WcStatus.SUCCESS;
            String detail = ok ? "" : NativeCodes.describe(nativeStatus, wc.getVendor_err());
            if (!ok && status != WcStatus.WR_FLUSH_ERR) {
                state = QpState.ERROR; // the native QP is in ERROR after an error completion
            }
            if ((id & DisniDevice.RECV_TAG) != 0) {
                ReceivePoster r = recvs;
                long wrId = r == null ? id : r.completed(id);
                receiveQueue.completed();
                WcOpcode op = ok ? NativeCodes.opcode(wc.getOpcode()) : WcOpcode.RECV;
                boolean imm = ok && (wc.getWc_flags() & NativeCodes.WC_FLAG_WITH_IMM) != 0;
                recvCq.add(wrId, status, op, ok ? wc.getByte_len() : 0, imm, imm ? NativeCodes.fromWireImmediate(wc.getImm_data()) : 0, qpn, detail);
            } else {
                sendQueue.completed(id, status, ok ? wc.getByte_len() : 0, detail);
            }
        }
    }

    // ------------------------------------------------------------------ close

    @Override
    public void close() {
        DisniMemoryRegion stage;
        synchronized (cm.lock) {
            int n;
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
                n = nativeQpn;
            }
            if (n >= 0) {
                device.completions().unregister(n);
            }
            connection.close();
            synchronized (this) {
                if (sends != null) {
                    sends.free();
                }
                if (recvs != null) {
                    recvs.free();
                }
                stage = sendQueue.takeStaging();
            }
        }
        if (stage != null) {
            stage.deregister();
        }
        device.releaseCqEntries(attributes.maxSendWr() + attributes.maxReceiveWr());
        sendCq.removeUser(this);
        recvCq.removeUser(this);
        pd.forget(this);
        device.forget(this);
    }

    @Override
    public String toString() {
        return "qp{" + qpn + ", " + state + (nativeQpn >= 0 ? ", native " + nativeQpn : "") + ", " + connection.phase() + "}";
    }
}
