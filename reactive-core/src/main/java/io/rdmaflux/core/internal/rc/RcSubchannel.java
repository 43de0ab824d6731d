package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.QpTimeouts;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.ChannelControlFrameCodec;
import io.rdmaflux.core.frame.CloseFrameCodec;
import io.rdmaflux.core.frame.CreditFrameCodec;
import io.rdmaflux.core.frame.CtsFrameCodec;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.frame.FinFrameCodec;
import io.rdmaflux.core.frame.FrameFormatException;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.RailDownFrameCodec;
import io.rdmaflux.core.frame.ReadFinFrameCodec;
import io.rdmaflux.core.frame.RtsFrameCodec;
import io.rdmaflux.core.frame.RtsReadFrameCodec;
import io.rdmaflux.core.internal.buffer.SlotPool;
import io.rdmaflux.core.internal.cq.SharedCompletionQueue;
import io.rdmaflux.core.internal.credit.ReceiveCredits;
import io.rdmaflux.core.internal.srq.RailSharedBuffers;
import io.rdmaflux.core.internal.srq.SrqReceiveShare;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The send/receive channel of seed 001 &sect;3.1 on one RC queue pair: a pool of pre-registered,
 * fixed-size receive buffers kept posted, a pool of send buffers the payload is copied into (or
 * written in place), and credit-based flow control with credits piggybacked on every frame and an
 * explicit CREDIT frame when they accumulate with no reverse traffic.
 *
 * <p><b>Buffers:</b> {@code receiveBuffers} DATA buffers are covered by credits; {@code controlBuffers}
 * more are posted for CREDIT and CLOSE frames, which take no credit and are reposted at once (the
 * reserve of MVAPICH-style designs; RC's RNR retry covers a burst beyond it). One send buffer is kept
 * back for control frames so credit can always flow.
 *
 * <p><b>Establishment:</b> the accepting side sends nothing before the first frame from the
 * connecting side arrives, since until then the peer's QP may not be ready to receive; the
 * connecting side sends a CREDIT frame right after connecting.
 *
 * <p><b>Concurrency:</b> progress thread only, after construction. <b>Lifecycle:</b> {@link #close()}
 * destroys the QP and CQ and deregisters both pools.
 */
public final class RcSubchannel implements Channel, CompletionSink {
    private static final long KIND_RECV = WorkRequestTokens.WR_RECV;
    private static final long NO_TOKEN = WorkRequestTokens.NONE;

    private final int rail;
    private final Port port;
    private final CompletionQueue cq;
    /**
     * Shared CQ only: completions dispatched before the connection's first duty cycle (it may still be
     * under construction on the connecting thread), kept as copies and replayed then; progress thread.
     */
    private final java.util.ArrayList<WorkCompletion> heldCompletions = new java.util.ArrayList<>();
    private boolean attached;
    /** The device's CQ shared by the node's QPs (null: {@link #cq} is this channel's own). */
    private final @Nullable SharedCompletionQueue sharedCq;
    /** Shared-CQ mode: signals the connection's engine registration on each dispatched completion. */
    private volatile @Nullable Runnable arrivalHint;
    private final QueuePair qp;
    /** This channel's receive buffers: its own pool, or (null) its share of the rail's SRQ ({@link #srqShare}). */
    private final @Nullable SlotPool receivePool;
    private final @Nullable SrqReceiveShare srqShare;
    private final SlotPool sendPool;
    /** The connecting side's first frame (a CREDIT) is still to be sent, by the next duty cycle. */
    private boolean firstFrameDue;
    private final int receiveBuffers;
    private final ReceiveCredits receiveCredits;
    private final RcSendQueue sendQueue;
    private final RcFrameDispatch dispatch;
    /** The packed DATA frame being filled ({@link #openPack}): its send slot (-1 if none), first PSN, write position, count. */
    private int packSlot = -1;
    private int packPsn;
    private int packPosition;
    private int packCount;
    private final int maxWrites;
    private final ReceiveWorkRequest recvWr = new ReceiveWorkRequest();
    private final UnsafeBuffer recvMemory;
    private final UnsafeBuffer sendMemory;
    private @Nullable ChannelEvents listener;
    private int peerBufferBytes;
    private int peerReceiveBuffers;
    private long sendCredits;
    private long bytesSent;
    private long messagesCompleted;
    private long packedFramesSent;
    /** Frames received, by {@link FrameType#code()}: plain counters of the progress thread. */
    private final long[] framesReceivedByType = new long[FrameType.MAX_CODE + 1];
    private boolean established;
    private boolean failed;
    private boolean closed;
    /** CLOSE went: no more credit-taking frames (messages); control frames may follow until {@link #finalSent}. */
    private boolean closeSent;
    /** The last frame went (a FINAL or abort CLOSE): nothing more is sent on this rail. */
    private boolean finalSent;
    private int closeRailMask;

    /**
     * Creates the QP (in INIT, receives posted) and registers the pools.
     *
     * @param bufferBytes      size of every send and receive buffer (frame header included)
     * @param receiveBuffers   DATA receive buffers (the most credits the peer can hold)
     * @param controlBuffers   extra receive buffers for CREDIT/CLOSE frames
     * @param sendBuffers      send buffers, at least 2 (one stays for control frames)
     * @param creditThreshold  pending credits that trigger an explicit CREDIT frame
     * @param timeouts         the QP's transport and RNR retry settings
     * @param maxWrites        RDMA WRITEs (rendezvous stripes) that may be outstanding at once, &gt;= 0
     * @throws VerbsException if the device refuses a resource
     */
    public RcSubchannel(int rail, ProtectionDomain pd, Port port, int bufferBytes, int receiveBuffers, int controlBuffers,
                        int sendBuffers, int creditThreshold, QpTimeouts timeouts, int maxWrites) {
        this(rail, pd, port, bufferBytes, receiveBuffers, controlBuffers, sendBuffers, creditThreshold, timeouts, maxWrites, null);
    }

    /**
     * As above; with {@code shared} the channel registers nothing of its own: its QP consumes the rail's
     * shared receive queue (buffer credits lent by its {@link io.rdmaflux.core.internal.srq.SrqCreditBudget}
     * account as its subscriber's demand asks) and its send buffers come from the rail's shared send region.
     */
    public RcSubchannel(int rail, ProtectionDomain pd, Port port, int bufferBytes, int receiveBuffers, int controlBuffers,
                        int sendBuffers, int creditThreshold, QpTimeouts timeouts, int maxWrites, @Nullable RailSharedBuffers shared) {
        this(rail, pd, port, bufferBytes, receiveBuffers, controlBuffers, sendBuffers, creditThreshold, timeouts, maxWrites, shared, null);
    }

    /**
     * As above; with {@code sharedCq} the QP's completions go to the device's shared CQ, which hands them
     * to this channel by QP number (seed 000 &sect;5.1), and the channel creates no CQ of its own.
     *
     * @throws RdmaException if the shared CQ serves its most queue pairs already (naming the builder option)
     */
    public RcSubchannel(int rail, ProtectionDomain pd, Port port, int bufferBytes, int receiveBuffers, int controlBuffers,
                        int sendBuffers, int creditThreshold, QpTimeouts timeouts, int maxWrites, @Nullable RailSharedBuffers shared,
                        @Nullable SharedCompletionQueue sharedCq) {
        if (sendBuffers < 2) {
            throw new IllegalArgumentException("sendBuffers >= 2 required but it was " + sendBuffers);
        }
        if (maxWrites < 0) {
            throw new IllegalArgumentException("maxWrites >= 0 required but it was " + maxWrites);
        }
        this.maxWrites = maxWrites;
        this.rail = rail;
        this.port = port;
        this.receiveBuffers = receiveBuffers;
        int totalRecv = receiveBuffers + controlBuffers;
        this.receiveCredits = new ReceiveCredits(receiveBuffers, creditThreshold);
        this.peerBufferBytes = bufferBytes;
        SlotPool rp = null;
        SlotPool sp = null;
        CompletionQueue c = null;
        QueuePair q = null;
        try {
            if (shared == null) {
                rp = new SlotPool("recv rail " + rail, pd, bufferBytes, totalRecv, Access.LOCAL_WRITE);
                sp = new SlotPool("send rail " + rail, pd, bufferBytes, sendBuffers, Access.LOCAL_WRITE);
            } else {
                if (shared.send().slotBytes() != bufferBytes || shared.receive().region().slotBytes() != bufferBytes) {
                    throw new IllegalArgumentException("shared buffers of " + shared.send().slotBytes() + " bytes but bufferBytes " + bufferBytes);
                }
                // none kept mapped: N idle connections must not hold N slots of the region (a control frame that
                // finds the region empty waits, like one that finds this channel's own pool empty)
                sp = SlotPool.share("send rail " + rail, shared.send(), sendBuffers, 0);
            }
            c = sharedCq != null ? sharedCq.cq() : pd.device().createCompletionQueue(entriesPerQp(receiveBuffers, controlBuffers, sendBuffers,
                maxWrites));
            q = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, port).cq(c).srq(shared == null ? null : shared.receive().srq())
                .maxSendWr(sendBuffers + RcSendQueue.HEADROOM + maxWrites).maxReceiveWr(totalRecv).maxInlineBytes(0)
                .retryCount(timeouts.retryCount()).retryTimeoutNs(timeouts.retryTimeoutNs())
                .rnrRetryCount(timeouts.rnrRetryCount()).rnrTimeoutNs(timeouts.rnrTimeoutNs()).build());
            q.init();
        } catch (RuntimeException e) {
            if (q != null) {
                q.close();
            }
            if (c != null && sharedCq == null) {
                c.close();
            }
            if (sp != null) {
                sp.close();
            }
            if (rp != null) {
                rp.close();
            }
            throw e;
        }
        this.receivePool = rp;
        this.srqShare = shared == null ? null : new SrqReceiveShare(shared.receive(), totalRecv);
        this.sendPool = sp;
        this.cq = c;
        this.sharedCq = sharedCq;
        this.qp = q;
        this.recvMemory = rp != null ? rp.memory() : srqShare.memory();
        this.sendMemory = sp.memory();
        this.sendQueue = new RcSendQueue(this, q, sp, rail, maxWrites);
        this.dispatch = new RcFrameDispatch(this, recvMemory);
        if (rp != null) {
            for (int i = 0; i < totalRecv; i++) {
                postReceive(rp.acquire());
            }
        }
        if (sharedCq != null) {
            try {
                // last: the progress thread may dispatch to this channel from now on
                sharedCq.register(q.qpNumber(), this::onSharedCompletion);
            } catch (RuntimeException e) {
                closed = true;
                q.close();
                sp.close();
                if (rp != null) {
                    rp.close();
                } else {
                    srqShare.close();
                }
                throw e;
            }
        }
    }

    /**
     * Completions one RC channel can have outstanding in its CQ: its receive buffers, its send queue (send
     * buffers, the signalling headroom, RDMA WRITEs/READs) and a margin. A shared CQ is sized from it.
     */
    public static int entriesPerQp(int receiveBuffers, int controlBuffers, int sendBuffers, int maxWrites) {
        return receiveBuffers + controlBuffers + sendBuffers + RcSendQueue.HEADROOM + maxWrites + 8;
    }

    /** This rail's identity for scheduler registries: an opaque token, so a snapshot does not keep the channel reachable. */
    private final Object identity = new Object() {
        @Override
        public String toString() {
            return "rail " + rail + " identity";
        }
    };

    @Override
    public Object identity() {
        return identity;
    }

    @Override
    public ChannelKind kind() {
        return ChannelKind.RC_SEND_RECV;
    }

    /** Sets who hears about arrivals, completions and credits; before the first {@link #doWork}. */
    @Override
    public void events(ChannelEvents events) {
        this.listener = events;
    }

    /** The credit word of a frame being sent now: this rail's pending buffer credits and the connection's message-credit total. */
    private int takeCreditWord() {
        ChannelEvents l = listener;
        return FrameHeader.packCredits(receiveCredits.takePending(), l == null ? 0 : l.takeMessageCreditTotal());
    }

    /** What the peer needs to connect to this subchannel. */
    public QpEndpoint localEndpoint() {
        return qp.localEndpoint();
    }

    /**
     * Connects the QP to the peer's endpoint (INIT → RTS).
     *
     * @param peerBufferBytes the peer's receive buffer size: frames sent are at most this long
     * @param peerReceiveBuffers the peer's DATA receive buffers: the most credits this side can hold
     * @param initialCredits  credits the peer granted in its handshake
     * @param connecting      whether this is the connecting side, which then sends the first frame
     */
    public void connect(QpEndpoint remote, int peerBufferBytes, int peerReceiveBuffers, int initialCredits, boolean connecting) {
        this.peerBufferBytes = Math.min(peerBufferBytes, sendPool.slotBytes());
        this.peerReceiveBuffers = peerReceiveBuffers;
        this.sendCredits = initialCredits;
        qp.connect(remote);
        if (connecting) {
            established = true;
            // sent by the first duty cycle: connect runs on the connection manager's thread, and a send
            // buffer taken here would race the progress thread's check-then-take on a node-wide shared
            // send region (sharedSendBuffers), which then found none (SlotPool.offset(-1))
            firstFrameDue = true;
        }
    }

    /** Credits announced in this side's handshake, granted before any demand. */
    public void grantInitialCredits(int n) {
        receiveCredits.grantInitial(n);
    }


    @Override
    public int rail() {
        return rail;
    }

    @Override
    public Port port() {
        return port;
    }

    @Override
    public long sendCredits() {
        return sendCredits;
    }

    @Override
    public int freeSendBuffers() {
        return established && !failed && !closeSent ? Math.max(0, sendPool.available() - 1) : 0;
    }

    @Override
    public boolean isUsable() {
        return !failed && !closed && !closeSent;
    }

    /**
     * Whether control frames (CREDIT, CTS, RAIL_DOWN) can still go on this rail: not failed and its last
     * frame not sent. Unlike {@link #isUsable()} this holds after a graceful CLOSE, so a side that closed
     * keeps granting credit (and answering RTSs) until the peer's CLOSE says it sends nothing more.
     */
    public boolean carriesControl() {
        return !failed && !closed && !finalSent;
    }

    @Override
    public int maxFramePayloadBytes() {
        return peerBufferBytes - FrameHeader.LENGTH;
    }

    @Override
    public int framesInFlight() {
        return sendQueue.framesInFlight();
    }

    @Override
    public long bytesSent() {
        return bytesSent;
    }

    @Override
    public long messagesCompleted() {
        return messagesCompleted;
    }

    /** SEND work requests posted (every frame). */
    public long sendsPosted() {
        return sendQueue.sendsPosted();
    }

    /** SEND completions polled: with selective signaling fewer than {@link #sendsPosted()}. */
    public long sendCompletions() {
        return sendQueue.sendCompletions();
    }

    /** Packed DATA frames posted (each carrying several messages). */
    public long packedFramesSent() {
        return packedFramesSent;
    }

    /**
     * Frames of {@code type} posted on this rail so far (a frame whose post failed is not counted).
     * Read on any thread the count may be slightly stale.
     */
    public long framesSent(FrameType type) {
        return sendQueue.framesSent(type);
    }

    /** Frames of {@code type} that arrived on this rail and passed the header checks; may be slightly stale off the progress thread. */
    public long framesReceived(FrameType type) {
        return framesReceivedByType[type.code()];
    }

    /**
     * The registered memory of this rail's send buffers: DATA frames are written into it, a
     * {@link RdmaMessage#write writer} message of one frame fills it in place. Not API: for tests that
     * check where a writer wrote (reached through the channel package of the tests).
     */
    MemoryRegion sendRegion() {
        return sendPool.region();
    }

    /** The peer's DATA receive buffers (known after {@link #connect}). */
    public int peerReceiveBuffers() {
        return peerReceiveBuffers;
    }

    /** Send buffers of this subchannel. */
    public int sendBufferCount() {
        return sendPool.capacity();
    }

    /** Receive buffers of this subchannel (DATA and control), the range of slot numbers. */
    public int receiveSlots() {
        return receivePool != null ? receivePool.capacity() : srqShare.capacity();
    }

    /** Receive buffers holding DATA the application has not released. */
    public int receiveBuffersHeld() {
        return receiveCredits.held();
    }

    /** Send buffers posted and not completed (DATA and control). */
    public int sendBuffersInUse() {
        return sendPool.inUse();
    }

    public boolean isFailed() {
        return failed;
    }

    /**
     * Posts one DATA frame carrying {@code length} bytes of {@code message} from {@code srcOffset};
     * uses one credit. The caller checked {@link #canSend()}.
     *
     * @param token handed back in {@link ChannelEvents#onSendCompleted}
     */
    public void sendData(RdmaMessage message, int srcOffset, int length, boolean first, boolean last, int psn, long token) {
        int slot = sendPool.acquire();
        int off = sendPool.offset(slot);
        int msgLen = message.lengthBytes();
        DataFrameCodec.encodeHeader(sendMemory, off, first, last, 0, psn, takeCreditWord(), length, msgLen);
        if (first && last) {
            message.writeTo(sendMemory, DataFrameCodec.payloadOffset(off));
        } else {
            message.copyTo(srcOffset, sendMemory, DataFrameCodec.payloadOffset(off), length);
        }
        sendCredits--;
        bytesSent += length;
        if (last) {
            messagesCompleted++;
        }
        sendQueue.postBatched(slot, FrameHeader.LENGTH + length, token, FrameType.DATA);
    }

    /**
     * Starts a packed DATA frame whose first message has PSN {@code psn}: takes a send buffer; the
     * caller then {@link #packAppend appends} messages and {@link #closePack closes} it. The caller
     * checked {@link #canSend()}.
     */
    public void openPack(int psn) {
        packSlot = sendPool.acquire();
        sendQueue.clearToken(packSlot);
        packPsn = psn;
        packCount = 0;
        packPosition = DataFrameCodec.payloadOffset(sendPool.offset(packSlot));
    }

    /**
     * Copies {@code message} (the next PSN) into the open packed frame; the caller checked that it fits.
     * The frame holds the bytes until its send completes (or, if this subchannel fails first, until
     * {@link #forEachUnackedSend} handed them to the connection), so the caller may release the
     * message right after.
     */
    public void packAppend(RdmaMessage message) {
        int len = message.lengthBytes();
        int at = DataFrameCodec.putPackedLength(sendMemory, packPosition, len);
        message.writeTo(sendMemory, at);
        packPosition = at + len;
        packCount++;
    }

    /**
     * Every credit-taking frame this subchannel took a send buffer for and has not seen complete: posted
     * without a completion, held back by selective signaling, or whose post failed. Meant for
     * {@link ChannelEvents#onFailure}, when nothing more completes here: the connection sends again
     * what these frames carried (their bytes stay in the send buffers until {@link #close()}).
     */
    public void forEachUnackedSend(UnackedSend visitor) {
        sendQueue.forEachUnacked(visitor, sendMemory, packSlot);
    }

    /**
     * Posts the open packed frame; uses one buffer credit (its messages used a message credit each).
     *
     * @param token handed back in {@link ChannelEvents#onSendCompleted}
     */
    public void closePack(long token) {
        int slot = packSlot;
        packSlot = -1;
        int off = sendPool.offset(slot);
        int payload = packPosition - DataFrameCodec.payloadOffset(off);
        int len = DataFrameCodec.encodePackedHeader(sendMemory, off, 0, packPsn, takeCreditWord(), payload, packCount);
        sendCredits--;
        bytesSent += payload;
        messagesCompleted += packCount;
        packedFramesSent++;
        sendQueue.postBatched(slot, len, token, FrameType.DATA);
    }

    /**
     * Posts an RTS frame for a message of {@code messageLength} bytes (seed 001 &sect;3: start
     * rendezvous); uses one buffer credit like a DATA frame. The caller checked {@link #canSend()}.
     *
     * @param token handed back in {@link ChannelEvents#onSendCompleted}
     */
    public void sendRts(int psn, int messageLength, long token) {
        int slot = sendPool.acquire();
        int off = sendPool.offset(slot);
        int len = RtsFrameCodec.encode(sendMemory, off, psn, takeCreditWord(), messageLength);
        sendCredits--;
        sendQueue.postBatched(slot, len, token, FrameType.RTS);
    }

    /**
     * Posts a CTS frame (reply rendezvous): the peer may RDMA WRITE its message {@code psn} into
     * {@code [remoteAddress, remoteAddress + messageLength)} with {@code rkey}. A control frame: no
     * credit; it may use the send buffer kept back for control frames.
     *
     * @return false if no send buffer is free now (retry later) or the subchannel cannot send
     */
    public boolean sendCts(int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        if (!established || failed || finalSent || sendPool.available() == 0) {
            return false;
        }
        int slot = sendPool.acquire();
        int len = CtsFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, takeCreditWord(), messageLength,
            remoteAddress, rkey, flags);
        sendQueue.post(slot, len, NO_TOKEN, FrameType.CTS);
        return !failed;
    }

    /**
     * Posts a CTS frame carrying one rkey per rail (rails over several devices, {@link CtsFrameCodec}); the
     * one-rkey frame when they are all the same.
     *
     * @return false if no send buffer is free now (retry later) or the subchannel cannot send
     * @throws IllegalStateException if the frame does not fit a send buffer (naming the sizes and the fix)
     */
    @Override
    public boolean sendCts(int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        if (!established || failed || finalSent || sendPool.available() == 0) {
            return false;
        }
        if (CtsFrameCodec.length(railRkeys.length) > sendPool.slotBytes()) {
            throw new IllegalStateException("a CTS with " + railRkeys.length + " rail rkeys takes " + CtsFrameCodec.length(railRkeys.length)
                + " bytes but a send buffer has " + sendPool.slotBytes() + "; raise RdmaNode.Builder.bufferBytes(..)");
        }
        int slot = sendPool.acquire();
        int len = CtsFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, takeCreditWord(), messageLength,
            remoteAddress, railRkeys, flags);
        sendQueue.post(slot, len, NO_TOKEN, FrameType.CTS);
        return !failed;
    }

    /**
     * Whether one rendezvous stripe (an RDMA WRITE and its FIN frame) can be posted now: a send
     * buffer for the FIN beyond the one kept for control frames, and room for the WRITE.
     */
    public boolean canWriteStripe() {
        return established && !failed && !closeSent && sendQueue.writesInFlight() < maxWrites && sendPool.available() > 1;
    }

    /**
     * Posts one stripe of a rendezvous message: a signaled RDMA WRITE of {@code length} bytes from
     * local registered memory into the peer's message buffer at {@code stripeOffset}, then a FIN frame
     * on the same QP, which RC delivers after the WRITE's data (seed 000 &sect;5.3). The caller checked
     * {@link #canWriteStripe()}.
     *
     * @param token handed back in {@link ChannelEvents#onSendCompleted} when the FIN (so the WRITE) completed
     */
    public void writeStripe(int psn, int messageLength, long localAddress, int lkey, long remoteAddress, int rkey,
                            int stripeOffset, int length, int stripes, int stripeIndex, long token) {
        sendQueue.postDeferredUnsignaled();
        if (failed) {
            return;
        }
        bytesSent += length;
        if (!sendQueue.postWrite(localAddress + stripeOffset, lkey, remoteAddress + stripeOffset, rkey, length)) {
            return;
        }
        int slot = sendPool.acquire();
        int len = FinFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, takeCreditWord(), messageLength,
            stripeOffset, length, stripes, stripeIndex);
        // the FIN's completion is the stripe's: RC completes it after the WRITE, and it proves the FIN arrived
        sendQueue.post(slot, len, token, FrameType.FIN);
    }

    /**
     * Posts an RTS_READ (the READ rendezvous, seed 001 &sect;3): the peer may RDMA READ message {@code psn}
     * from {@code [address, +messageLength)} with {@code rkey}; one buffer credit. The caller checked
     * {@link #canSend()}.
     */
    @Override
    public void sendRtsRead(int psn, int messageLength, long address, int rkey, long token) {
        int slot = sendPool.acquire();
        int len = RtsReadFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, takeCreditWord(), messageLength, address, rkey);
        sendCredits--;
        sendQueue.postBatched(slot, len, token, FrameType.RTS_READ);
    }

    /** Whether an RDMA READ can be posted now: RDMA operations (WRITEs and READs) in flight below the QP's room for them. */
    @Override
    public boolean canReadStripe() {
        return established && !failed && !closed && sendQueue.writesInFlight() + sendQueue.readsInFlight() < maxWrites;
    }

    /**
     * Posts one signalled RDMA READ of a stripe of the peer's message into local registered memory; its
     * completion is reported with {@code token}. The caller checked {@link #canReadStripe()}.
     */
    @Override
    public void readStripe(long localAddress, int lkey, long remoteAddress, int rkey, int length, long token) {
        if (failed) {
            return;
        }
        sendQueue.postRead(localAddress, lkey, remoteAddress, rkey, length, token);
    }

    /**
     * Posts a READ_FIN (control frame, no credit): this side's READs of message {@code psn} completed.
     *
     * @return false if no send buffer is free now (retry later) or the subchannel cannot send
     */
    @Override
    public boolean sendReadFin(int psn, int messageLength, int flags) {
        if (!established || failed || finalSent || sendPool.available() == 0) {
            return false;
        }
        int slot = sendPool.acquire();
        int len = ReadFinFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, takeCreditWord(), messageLength, flags);
        sendQueue.post(slot, len, NO_TOKEN, FrameType.READ_FIN);
        return !failed;
    }

    /** Whether an atomic can be posted now: as for an RDMA READ (an atomic takes a READ's place in the send queue). */
    @Override
    public boolean canPostAtomic() {
        return canReadStripe();
    }

    /**
     * Posts one signalled atomic, counted and completed as an RDMA READ (a requester's atomics and READs share
     * the responder resources, {@code max_rd_atomic}); its completion is reported with {@code token}.
     */
    @Override
    public void postAtomic(boolean fetchAdd, long localAddress, int lkey, long remoteAddress, int rkey, long compareAdd, long swap,
                           long token) {
        if (failed) {
            return;
        }
        sendQueue.postAtomic(fetchAdd, localAddress, lkey, remoteAddress, rkey, compareAdd, swap, token);
    }

    @Override
    public int readsInFlight() {
        return sendQueue.readsInFlight();
    }

    /** An RDMA READ posted with {@code token} completed successfully. */
    void onReadRetired(long token) {
        ChannelEvents l = listener;
        if (l != null && !failed) {
            l.onReadCompleted(this, token);
        }
    }

    /**
     * Tells the peer that rail {@code failedRail} failed here (a control frame, no credit).
     *
     * @return false if no send buffer is free now (retry later) or this subchannel cannot send
     */
    public boolean sendRailDown(int failedRail) {
        if (!established || failed || finalSent || sendPool.available() == 0) {
            return false;
        }
        int slot = sendPool.acquire();
        sendQueue.post(slot, RailDownFrameCodec.encode(sendMemory, sendPool.offset(slot), takeCreditWord(), failedRail), NO_TOKEN,
            FrameType.RAIL_DOWN);
        return !failed;
    }

    /** The peer reported this rail failed on its side: fail it here too (the listener hears {@code onFailure}). */
    public void failedByPeer() {
        fail(new RdmaTransportException("the peer reported rail " + rail + " failed", null, null));
    }

    /** RDMA WRITEs posted and not completed. */
    public int writesInFlight() {
        return sendQueue.writesInFlight();
    }

    @Override
    public boolean canPostWrite() {
        return established && !failed && !closeSent && sendQueue.writesInFlight() < maxWrites;
    }

    @Override
    public boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag) {
        return postWrite(localAddress, lkey, remoteAddress, rkey, length, tag, true);
    }

    @Override
    public boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag, boolean signaled) {
        if (tag < 0 || tag >= (1 << 28)) {
            throw new IllegalArgumentException("tag in [0, 2^28) required but it was " + tag);
        }
        if (failed) {
            return false;
        }
        bytesSent += length;
        return sendQueue.postWrite(localAddress, lkey, remoteAddress, rkey, length, tag, signaled);
    }

    /** A bare WRITE posted with {@code tag} completed. */
    void onWriteRetired(int tag) {
        ChannelEvents l = listener;
        if (l != null && !failed) {
            l.onWriteCompleted(this, tag);
        }
    }

    @Override
    public boolean carriesOneSided() {
        return true;
    }

    @Override
    public boolean sendOneSidedControl(FrameType type, io.rdmaflux.core.frame.ControlFrameEncoder encoder) {
        if (!established || failed || finalSent || sendPool.available() == 0) {
            return false;
        }
        int slot = sendPool.acquire();
        int len = encoder.encode(sendMemory, sendPool.offset(slot), takeCreditWord());
        sendQueue.post(slot, len, NO_TOKEN, type);
        return !failed;
    }

    @Override
    public boolean sendChannelControl(DirectBuffer src, int offset, int length) {
        if (length <= 0 || length > maxFramePayloadBytes()) {
            throw new IllegalArgumentException("length in [1, " + maxFramePayloadBytes() + "] required but it was " + length);
        }
        if (!established || failed || finalSent || sendPool.available() == 0) {
            return false;
        }
        int slot = sendPool.acquire();
        int len = ChannelControlFrameCodec.encode(sendMemory, sendPool.offset(slot), takeCreditWord(), src, offset, length);
        sendQueue.post(slot, len, NO_TOKEN, FrameType.CHANNEL_CONTROL);
        return !failed;
    }

    /**
     * Sends an abort CLOSE, best effort (no retry: the connection terminates right after), unless this
     * rail's last frame went already; even after a graceful CLOSE. Nothing is sent on this rail after it.
     */
    public void sendAbort(int nextPsn, String reason) {
        if (finalSent || failed) {
            return;
        }
        if (established) {
            closeRailMask = 0;
            sendControl(FrameType.CLOSE, true, false, nextPsn, reason);
        }
        closeSent = true;
        finalSent = true;
    }

    /**
     * Sends a graceful CLOSE naming the rails ({@code railMask}, 0 for all) the connection sends it on, so
     * the peer does not wait for one on a rail that failed. Without {@code last} it ends the messages:
     * control frames may still follow. With {@code last} ({@link FrameHeader#FLAG_FINAL}) it is this
     * rail's last frame, sent once the peer's CLOSE arrived: as the CLOSE itself, or as a second CLOSE.
     *
     * @return true if the frame went or nothing is left to send; false if no send buffer is free now
     *         (call again later)
     */
    public boolean sendGracefulClose(int nextPsn, int railMask, boolean last) {
        if (failed || finalSent || (closeSent && !last)) {
            return true;
        }
        if (established) {
            if (sendPool.available() == 0) {
                return false;
            }
            closeRailMask = railMask;
            sendControl(FrameType.CLOSE, false, last, nextPsn, "");
        }
        closeSent = true;
        finalSent = last;
        return true;
    }

    /**
     * Tells the peer this side closed its inbound side: a CREDIT frame with
     * {@link FrameHeader#FLAG_INBOUND_CLOSED} naming the first PSN the subscriber did not get.
     *
     * @return false if no send buffer is free now (retry later) or this rail cannot send
     */
    public boolean sendInboundClosed(int firstUndeliveredPsn) {
        if (!established || failed || finalSent || sendPool.available() == 0) {
            return false;
        }
        int slot = sendPool.acquire();
        sendQueue.post(slot, CreditFrameCodec.encodeInboundClosed(sendMemory, sendPool.offset(slot), takeCreditWord(), firstUndeliveredPsn),
            NO_TOKEN, FrameType.CREDIT);
        return !failed;
    }

    /** Whether this rail's graceful or abort CLOSE went (no message goes after it). */
    public boolean closeSent() {
        return closeSent;
    }

    /** Whether this rail's last frame went (a FINAL or abort CLOSE). */
    public boolean finalSent() {
        return finalSent;
    }

    /** @return whether it was posted (false: failed, or no send buffer now) */
    private boolean sendControl(FrameType type, boolean abort, boolean last, int nextPsn, String reason) {
        if (failed) {
            return false;
        }
        int slot = sendPool.acquire();
        if (slot < 0) {
            return false;
        }
        int off = sendPool.offset(slot);
        int len = type == FrameType.CREDIT
            ? encodeCredit(off)
            : CloseFrameCodec.encode(sendMemory, off, 0, nextPsn, takeCreditWord(), abort, last,
                reason.length() > maxFramePayloadBytes() ? reason.substring(0, maxFramePayloadBytes()) : reason, closeRailMask);
        sendQueue.post(slot, len, NO_TOKEN, type);
        return true;
    }

    private int encodeCredit(int off) {
        return CreditFrameCodec.encode(sendMemory, off, 0, takeCreditWord());
    }

    /**
     * Posts the frame held back by selective signaling, signaled: called by the owner after every pass
     * that may have sent, so every frame's completion arrives without waiting for more traffic.
     */
    public void flushSends() {
        sendQueue.flush();
    }

    private void postReceive(int slot) {
        if (srqShare != null) {
            srqShare.repost(slot);
            return;
        }
        recvWr.wrId(KIND_RECV | slot).sge(receivePool.address(slot), receivePool.slotBytes(), receivePool.lkey());
        try {
            if (!qp.postReceive(recvWr)) {
                fail(new RdmaTransportException("receive queue of rail " + rail + " is full", null, null));
            }
        } catch (VerbsException e) {
            if (!closed) {
                fail(new RdmaTransportException("posting a receive on rail " + rail + " failed: " + e.getMessage(), e.status(), e));
            }
        }
    }

    /** Gives a DATA receive buffer back: reposted, and it counts as free for credits again. */
    public void releaseReceiveBuffer(int slot) {
        receiveCredits.onBufferFreed();
        if (srqShare != null) {
            srqShare.released();
            // the buffer is the rail's, not this channel's: back on the SRQ whatever this channel's state
            if (!closed) {
                srqShare.repost(slot);
            }
        } else if (!closed && !failed) {
            postReceive(slot);
        } else {
            receivePool.release(slot);
        }
    }

    /** A receive buffer this channel will not repost on its own QP: back to its pool (or to the SRQ). */
    private void dropSlot(int slot) {
        if (srqShare != null) {
            if (!closed) {
                srqShare.repost(slot);
            }
        } else {
            receivePool.release(slot);
        }
    }

    /**
     * Polls the CQ and sends an explicit CREDIT frame if one is due.
     *
     * @return work done
     */
    public int doWork(long nowNs) {
        if (closed) {
            return 0;
        }
        int work = 0;
        if (!attached) {
            // the connection's first duty cycle: it is built and registered, completions may go to it now
            attached = true;
            for (WorkCompletion wc : heldCompletions) {
                onCompletion(wc);
                work++;
            }
            heldCompletions.clear();
        }
        if (firstFrameDue && (failed || sendControl(FrameType.CREDIT, false, false, 0, ""))) {
            // the connecting side's first frame (see connect), on the progress thread
            firstFrameDue = false;
            work++;
        }
        try {
            int n;
            while (sharedCq == null && (n = cq.poll(32, this)) > 0) {
                work += n;
                if (n < 32) {
                    break;
                }
            }
        } catch (VerbsException e) {
            fail(new RdmaTransportException("polling the CQ of rail " + rail + " failed: " + e.getMessage(), e.status(), e));
        }
        return work + flushCredits();
    }

    /**
     * Sends a CREDIT frame now if this subchannel can (carrying the connection's pending message
     * credits with this rail's buffer credits).
     *
     * @return whether one was sent
     */
    public boolean sendCreditFrame() {
        if (established && !failed && !finalSent && sendPool.available() > 0) {
            sendControl(FrameType.CREDIT, false, false, 0, "");
            return true;
        }
        return false;
    }

    /** Free DATA receive buffers (capacity minus buffers the application holds); 0 once failed. */
    public int freeReceiveBuffers() {
        return failed || closed ? 0 : receiveBuffers - receiveCredits.held();
    }

    /** Grants what demand and free buffers allow and sends a CREDIT frame if due; returns 1 if one was sent. */
    public int flushCredits() {
        if (srqShare == null) {
            receiveCredits.grant();
        } else if (!failed && !closed) {
            grantFromSharedPool();
        }
        if (established && !failed && !finalSent && receiveCredits.explicitCreditDue() && sendPool.available() > 0) {
            sendControl(FrameType.CREDIT, false, false, 0, "");
            return 1;
        }
        return 0;
    }

    /**
     * SRQ mode: asks the rail's budget for the buffers the subscriber's demand wants beyond the credits the
     * peer holds, at most this channel's free DATA buffers, and grants what it lends.
     */
    private void grantFromSharedPool() {
        ChannelEvents l = listener;
        srqShare.lend(receiveCredits, l == null ? 0 : l.receiveDemand());
    }

    /** SRQ mode: buffers of the rail's shared pool this channel holds (credits out plus messages held); 0 otherwise. */
    public int sharedBuffersHeld() {
        return srqShare == null ? 0 : srqShare.budgetHeld();
    }

    /**
     * Signal-driven scheduling: the CQ's completions call {@code hint} (its own CQ's provider hint, or the
     * shared CQ's dispatch below); true when they all do.
     */
    @Override
    public boolean signalArrivals(Runnable hint) {
        if (srqShare != null) {
            // credits wanted from the node's shared pool, send buffers from the rail's shared region: told when
            // another connection gives some back
            srqShare.onRoom(hint);
            sendPool.onRoom(hint);
        }
        if (sharedCq != null) {
            arrivalHint = hint;
            return true;
        }
        return cq.arrivalHint(hint);
    }

    /** From the shared CQ's dispatcher (progress thread): held until the connection's first duty cycle. */
    private void onSharedCompletion(WorkCompletion wc) {
        Runnable hint = arrivalHint;
        if (hint != null) {
            // the connection's stages after the completion (delivery, credits) run in its own visit
            hint.run();
        }
        if (attached) {
            onCompletion(wc);
        } else {
            heldCompletions.add(wc.copy());
        }
    }

    @Override
    public void onCompletion(WorkCompletion wc) {
        if (closed) {
            // closed by a callback (application code run from an earlier completion of the same poll): the
            // pools are gone, the rest of the batch has nothing to go to
            return;
        }
        long wrId = wc.wrId();
        if (WorkRequestTokens.wrKind(wrId) != KIND_RECV) {
            sendQueue.onCompletion(wc);
            return;
        }
        int slot = WorkRequestTokens.wrSlot(wrId);
        if (srqShare != null) {
            if (!wc.isSuccess()) {
                // a flushed or failed receive of the SRQ: its buffer is the rail's, posted again
                srqShare.pool().repost(slot);
                fail(transportError("receive", wc));
                return;
            }
            slot = srqShare.adopt(slot);
            if (slot < 0) {
                fail(new RdmaTransportException("the peer sent more frames on rail " + rail + " than its credits and the "
                    + receiveSlots() + " receive buffers of this channel allow", null, null));
                return;
            }
        } else if (!wc.isSuccess()) {
            receivePool.release(slot);
            fail(transportError("receive", wc));
            return;
        }
        onFrame(slot, wc.byteLength());
    }

    /** A DATA or RTS frame arrived: it uses one of the buffer credits the peer held. @return false if it held none */
    boolean onDataArrived() {
        return receiveCredits.onDataArrived();
    }

    /** A receive buffer whose frame failed the checks returns to the pool without being reposted. */
    void dropReceiveBuffer(int slot) {
        dropSlot(slot);
    }

    /** A control frame was read: its receive buffer is posted again at once. */
    void repost(int slot) {
        postReceive(slot);
    }

    /** A frame posted with {@code token} completed successfully (its slot is free again). */
    void onSendRetired(long token) {
        ChannelEvents l = listener;
        if (l != null && !failed) {
            // after a failure the connection already re-sent what had no completion then
            l.onSendCompleted(this, token);
        }
    }

    private void onFrame(int slot, int byteLength) {
        int off = receivePool != null ? receivePool.offset(slot) : srqShare.offset(slot);
        FrameType type;
        try {
            type = FrameHeader.validate(recvMemory, off, byteLength);
        } catch (FrameFormatException e) {
            dropSlot(slot);
            fail(e);
            return;
        }
        established = true;
        framesReceivedByType[type.code()]++;
        sendCredits += FrameHeader.bufferCredits(recvMemory, off);
        ChannelEvents l = listener;
        if (l != null) {
            l.onMessageCreditTotal(FrameHeader.messageCredits(recvMemory, off));
        }
        dispatch.dispatch(slot, off, type, l);
    }

    RdmaException transportError(String what, WorkCompletion wc) {
        return transportError(what, wc.status(), wc.detail());
    }

    private RdmaException transportError(String what, WcStatus status, String detail) {
        String why = switch (status) {
            case RETRY_EXC_ERR -> "the peer or the path is gone (transport retries exhausted)";
            case RNR_RETRY_EXC_ERR -> "the peer posted no receive in time";
            case WR_FLUSH_ERR -> "the queue pair is in ERROR";
            default -> "the completion failed";
        };
        return new RdmaTransportException(what + " on rail " + rail + " completed with " + status + ": " + why
            + (detail.isEmpty() ? "" : " (" + detail + ")"), status, null);
    }

    void fail(RdmaException e) {
        if (failed) {
            return;
        }
        failed = true;
        try {
            qp.toError();
        } catch (VerbsException ignored) {
            // the QP may already be closed; the failure is reported below either way
        }
        if (listener != null) {
            // the frame held back by selective signaling is dropped after this, so that onFailure still sees it
            listener.onFailure(this, e);
        }
        sendQueue.dropDeferred();
    }

    /** Moves the QP to ERROR (abort); outstanding work completes flushed. */
    public void abort() {
        if (!failed && !closed) {
            failed = true;
            sendQueue.dropDeferred();
            try {
                qp.toError();
            } catch (VerbsException ignored) {
                // closing anyway
            }
        }
    }

    /** Destroys the QP and CQ and deregisters the pools; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        sendQueue.dropDeferred();
        if (sharedCq != null) {
            // what of this QP is still in the shared CQ: SRQ buffers go back to the SRQ, the rest is dropped
            sharedCq.unregister(qp.qpNumber(), srqShare == null ? wc -> { } : srqShare.afterClose());
        } else if (srqShare != null) {
            srqShare.drain(qp, cq);
        }
        closed = true;
        qp.close();
        if (sharedCq == null) {
            cq.close();
        }
        sendPool.close();
        if (receivePool != null) {
            receivePool.close();
        } else {
            srqShare.close();
        }
    }

    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "RcSubchannel{rail=" + rail + ", qpn=" + qp.qpNumber() + ", sendCredits=" + sendCredits + ", " + receiveCredits + "}";
    }
}
