package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.QpTimeouts;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.ControlFrameEncoder;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.internal.buffer.SlotPool;
import io.rdmaflux.core.internal.cq.SharedCompletionQueue;
import io.rdmaflux.core.internal.srq.RailSharedBuffers;
import io.rdmaflux.core.internal.srq.SrqReceiveShare;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import org.agrona.DirectBuffer;
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
 * connecting side sends a CREDIT frame right after connecting, from its first duty cycle ({@link RcLifecycle}).
 *
 * <p><b>Structure:</b> this class owns the QP and the listener, makes the credit word, and routes
 * commands and completions to its parts: {@link RcLifecycle} (established, failed, closed: what failing
 * and closing do), {@link RcMessageSender} (frames
 * that carry messages, send credits), {@link RcControlSender} (control frames, the close handshake),
 * {@link RcSendQueue} (posting, selective signalling, retirement), {@link RcReceiveBuffers} (receive
 * buffers, own or a share of the rail's SRQ, and the credits they back), {@link RcFrameDispatch}
 * (arrived frame to event) and {@link RcCompletionSource} (own or shared CQ).
 *
 * <p><b>Concurrency:</b> progress thread only, after construction. <b>Lifecycle:</b> {@link #close()}
 * destroys the QP and CQ and deregisters both pools ({@link RcLifecycle}).
 */
public final class RcSubchannel implements Channel, CompletionSink {
    private final int rail;
    private final Port port;
    private final QueuePair qp;
    private final SlotPool sendPool;
    private final RcSendQueue sendQueue;
    private final RcMessageSender messages;
    private final RcControlSender control;
    private final RcReceiveBuffers receive;
    private final RcFrameDispatch dispatch;
    private final RcCompletionSource completions;
    private final RcLifecycle life;
    private final int maxWrites;
    private @Nullable ChannelEvents listener;
    private int peerBufferBytes;
    private int peerReceiveBuffers;

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
        int totalRecv = receiveBuffers + controlBuffers;
        this.peerBufferBytes = bufferBytes;
        RcResources res = new RcResources(rail, pd, port, bufferBytes, receiveBuffers, controlBuffers, sendBuffers, timeouts, maxWrites,
            shared, sharedCq);
        this.sendPool = res.sendPool;
        this.qp = res.qp;
        this.receive = new RcReceiveBuffers(this, qp, res.receivePool, shared == null ? null : new SrqReceiveShare(shared.receive(), totalRecv),
            receiveBuffers, creditThreshold);
        this.completions = new RcCompletionSource(this, res.cq, sharedCq);
        this.sendQueue = new RcSendQueue(this, qp, sendPool, rail, maxWrites);
        this.messages = new RcMessageSender(this, sendPool, sendQueue);
        this.control = new RcControlSender(this, sendPool, sendQueue);
        this.dispatch = new RcFrameDispatch(this, receive, messages);
        this.life = new RcLifecycle(this, qp, sendPool, sendQueue, control, receive, completions);
        receive.postAll();
        if (sharedCq != null) {
            try {
                // last: the progress thread may dispatch to this channel from now on
                completions.register(qp.qpNumber());
            } catch (RuntimeException e) {
                life.closeUnregistered();
                throw e;
            }
        }
    }

    /** Completions one RC channel can have outstanding in its CQ ({@link RcResources#entriesPerQp}); a shared CQ is sized from it. */
    public static int entriesPerQp(int receiveBuffers, int controlBuffers, int sendBuffers, int maxWrites) {
        return RcResources.entriesPerQp(receiveBuffers, controlBuffers, sendBuffers, maxWrites);
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

    @Override
    public void events(ChannelEvents events) {
        this.listener = events;
    }

    /** The connection's listener, null before {@link #events}. */
    @Nullable ChannelEvents listener() {
        return listener;
    }

    /** The credit word of a frame being sent now: this rail's pending buffer credits and the connection's message-credit total. */
    int takeCreditWord() {
        ChannelEvents l = listener;
        return FrameHeader.packCredits(receive.takePending(), l == null ? 0 : l.takeMessageCreditTotal());
    }

    @Override
    public QpEndpoint localEndpoint() {
        return qp.localEndpoint();
    }

    @Override
    public void connect(QpEndpoint remote, int peerBufferBytes, int peerReceiveBuffers, int initialCredits, boolean connecting) {
        this.peerBufferBytes = Math.min(peerBufferBytes, sendPool.slotBytes());
        this.peerReceiveBuffers = peerReceiveBuffers;
        messages.initialCredits(initialCredits);
        life.connect(remote, connecting);
    }

    /** Credits announced in this side's handshake, granted before any demand. */
    public void grantInitialCredits(int n) {
        receive.grantInitial(n);
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
        return messages.sendCredits();
    }

    @Override
    public int freeSendBuffers() {
        return life.established() && !life.failed() && !control.closeSent() ? Math.max(0, sendPool.available() - 1) : 0;
    }

    @Override
    public boolean isUsable() {
        return !life.failed() && !life.closed() && !control.closeSent();
    }

    /**
     * Whether control frames (CREDIT, CTS, RAIL_DOWN) can still go on this rail: not failed and its last
     * frame not sent. Unlike {@link #isUsable()} this holds after a graceful CLOSE, so a side that closed
     * keeps granting credit (and answering RTSs) until the peer's CLOSE says it sends nothing more.
     */
    @Override
    public boolean carriesControl() {
        return !life.failed() && !life.closed() && !control.finalSent();
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
        return messages.bytesSent();
    }

    @Override
    public long messagesCompleted() {
        return messages.messagesCompleted();
    }

    /** SEND work requests posted (every frame). */
    public long sendsPosted() {
        return sendQueue.sendsPosted();
    }

    /** SEND completions polled: with selective signaling fewer than {@link #sendsPosted()}. */
    public long sendCompletions() {
        return sendQueue.sendCompletions();
    }

    @Override
    public long packedFramesSent() {
        return messages.packedFramesSent();
    }

    @Override
    public long framesSent(FrameType type) {
        return sendQueue.framesSent(type);
    }

    @Override
    public long framesReceived(FrameType type) {
        return dispatch.framesReceived(type);
    }

    /**
     * The registered memory of this rail's send buffers: DATA frames are written into it, a
     * {@link RdmaMessage#write writer} message of one frame fills it in place. Not API: for tests that
     * check where a writer wrote (reached through the channel package of the tests).
     */
    MemoryRegion sendRegion() {
        return sendPool.region();
    }

    @Override
    public int peerReceiveBuffers() {
        return peerReceiveBuffers;
    }

    @Override
    public int sendBufferCount() {
        return sendPool.capacity();
    }

    @Override
    public int receiveSlots() {
        return receive.slots();
    }

    @Override
    public int receiveBuffersHeld() {
        return receive.held();
    }

    @Override
    public int sendBuffersInUse() {
        return sendPool.inUse();
    }

    @Override
    public boolean isFailed() {
        return life.failed();
    }

    /** Whether a frame from the peer arrived, or this is the connecting side and connected. */
    boolean isEstablished() {
        return life.established();
    }

    /** A frame from the peer arrived: its QP is ready, this side may send. */
    void markEstablished() {
        life.markEstablished();
    }

    @Override
    public void sendData(RdmaMessage message, int srcOffset, int length, boolean first, boolean last, int psn, long token) {
        messages.sendData(message, srcOffset, length, first, last, psn, token);
    }

    @Override
    public void openPack(int psn) {
        messages.openPack(psn);
    }

    @Override
    public void packAppend(RdmaMessage message) {
        messages.packAppend(message);
    }

    @Override
    public void forEachUnackedSend(UnackedSend visitor) {
        messages.forEachUnacked(visitor);
    }

    @Override
    public void closePack(long token) {
        messages.closePack(token);
    }

    @Override
    public void sendRts(int psn, int messageLength, long token) {
        messages.sendRts(psn, messageLength, token);
    }

    @Override
    public boolean sendCts(int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        return control.sendCts(psn, messageLength, remoteAddress, rkey, flags);
    }

    @Override
    public boolean sendCts(int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        return control.sendCts(psn, messageLength, remoteAddress, railRkeys, flags);
    }

    @Override
    public boolean canWriteStripe() {
        return life.established() && !life.failed() && !control.closeSent() && sendQueue.writesInFlight() < maxWrites
            && sendPool.available() > 1;
    }

    @Override
    public void writeStripe(int psn, int messageLength, long localAddress, int lkey, long remoteAddress, int rkey,
                            int stripeOffset, int length, int stripes, int stripeIndex, long token) {
        messages.writeStripe(psn, messageLength, localAddress, lkey, remoteAddress, rkey, stripeOffset, length, stripes, stripeIndex, token);
    }

    @Override
    public void sendRtsRead(int psn, int messageLength, long address, int rkey, long token) {
        messages.sendRtsRead(psn, messageLength, address, rkey, token);
    }

    @Override
    public boolean canReadStripe() {
        return life.established() && !life.failed() && !life.closed() && sendQueue.writesInFlight() + sendQueue.readsInFlight() < maxWrites;
    }

    @Override
    public void readStripe(long localAddress, int lkey, long remoteAddress, int rkey, int length, long token) {
        if (!life.failed()) {
            sendQueue.postRead(localAddress, lkey, remoteAddress, rkey, length, token);
        }
    }

    @Override
    public boolean sendReadFin(int psn, int messageLength, int flags) {
        return control.sendReadFin(psn, messageLength, flags);
    }

    @Override
    public boolean canPostAtomic() {
        return canReadStripe();
    }

    @Override
    public void postAtomic(boolean fetchAdd, long localAddress, int lkey, long remoteAddress, int rkey, long compareAdd, long swap,
                           long token) {
        if (!life.failed()) {
            sendQueue.postAtomic(fetchAdd, localAddress, lkey, remoteAddress, rkey, compareAdd, swap, token);
        }
    }

    @Override
    public int readsInFlight() {
        return sendQueue.readsInFlight();
    }

    @Override
    public boolean sendRailDown(int failedRail) {
        return control.sendRailDown(failedRail);
    }

    @Override
    public void failedByPeer() {
        fail(new RdmaTransportException("the peer reported rail " + rail + " failed", null, null));
    }

    @Override
    public int writesInFlight() {
        return sendQueue.writesInFlight();
    }

    @Override
    public boolean canPostWrite() {
        return life.established() && !life.failed() && !control.closeSent() && sendQueue.writesInFlight() < maxWrites;
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
        return messages.postWrite(localAddress, lkey, remoteAddress, rkey, length, tag, signaled);
    }

    @Override
    public boolean carriesOneSided() {
        return true;
    }

    @Override
    public boolean sendOneSidedControl(FrameType type, ControlFrameEncoder encoder) {
        return control.sendOneSidedControl(type, encoder);
    }

    @Override
    public boolean sendChannelControl(DirectBuffer src, int offset, int length) {
        if (length <= 0 || length > maxFramePayloadBytes()) {
            throw new IllegalArgumentException("length in [1, " + maxFramePayloadBytes() + "] required but it was " + length);
        }
        return control.sendChannelControl(src, offset, length);
    }

    @Override
    public void sendAbort(int nextPsn, String reason) {
        control.sendAbort(nextPsn, reason);
    }

    @Override
    public boolean sendGracefulClose(int nextPsn, int railMask, boolean last) {
        return control.sendGracefulClose(nextPsn, railMask, last);
    }

    @Override
    public boolean sendInboundClosed(int firstUndeliveredPsn) {
        return control.sendInboundClosed(firstUndeliveredPsn);
    }

    @Override
    public boolean closeSent() {
        return control.closeSent();
    }

    @Override
    public boolean finalSent() {
        return control.finalSent();
    }

    @Override
    public void flushSends() {
        sendQueue.flush();
    }

    @Override
    public void releaseReceiveBuffer(int slot) {
        receive.release(slot);
    }

    @Override
    public int doWork(long nowNs) {
        if (life.closed()) {
            return 0;
        }
        // the connection's first duty cycle: it is built and registered, completions may go to it now
        int work = completions.attach();
        work += life.sendFirstFrameIfDue();
        work += completions.poll();
        return work + flushCredits();
    }

    @Override
    public boolean sendCreditFrame() {
        return control.sendCreditFrame();
    }

    @Override
    public int freeReceiveBuffers() {
        return life.failed() || life.closed() ? 0 : receive.free();
    }

    @Override
    public int flushCredits() {
        receive.grant(listener, !life.failed() && !life.closed());
        return control.sendCreditFrameIf(receive.explicitCreditDue()) ? 1 : 0;
    }

    /** SRQ mode: buffers of the rail's shared pool this channel holds (credits out plus messages held); 0 otherwise. */
    public int sharedBuffersHeld() {
        return receive.sharedHeld();
    }

    /**
     * Signal-driven scheduling: the CQ's completions call {@code hint} (its own CQ's provider hint, or the
     * shared CQ's dispatch); true when they all do.
     */
    @Override
    public boolean signalArrivals(Runnable hint) {
        if (receive.shared()) {
            // credits wanted from the node's shared pool, send buffers from the rail's shared region: told when
            // another connection gives some back
            receive.onRoom(hint);
            sendPool.onRoom(hint);
        }
        return completions.signalArrivals(hint);
    }

    @Override
    public void onCompletion(WorkCompletion wc) {
        if (life.closed()) {
            // closed by a callback (application code run from an earlier completion of the same poll): the
            // pools are gone, the rest of the batch has nothing to go to
            return;
        }
        if (WorkRequestTokens.wrKind(wc.wrId()) != WorkRequestTokens.WR_RECV) {
            sendQueue.onCompletion(wc);
            return;
        }
        int slot = receive.onReceived(wc);
        if (slot >= 0) {
            dispatch.onFrame(slot, wc.byteLength(), listener);
        }
    }

    /** An RDMA READ posted with {@code token} completed successfully. */
    void onReadRetired(long token) {
        ChannelEvents l = listener;
        if (l != null && !life.failed()) {
            l.onReadCompleted(this, token);
        }
    }

    /** A bare WRITE posted with {@code tag} completed. */
    void onWriteRetired(int tag) {
        ChannelEvents l = listener;
        if (l != null && !life.failed()) {
            l.onWriteCompleted(this, tag);
        }
    }

    /** A frame posted with {@code token} completed successfully (its slot is free again). */
    void onSendRetired(long token) {
        ChannelEvents l = listener;
        if (l != null && !life.failed()) {
            // after a failure the connection already re-sent what had no completion then
            l.onSendCompleted(this, token);
        }
    }

    /** See {@link RcLifecycle#transportError}. */
    RdmaException transportError(String what, WorkCompletion wc) {
        return life.transportError(what, wc);
    }

    /** See {@link RcLifecycle#fail}. */
    void fail(RdmaException e) {
        life.fail(e);
    }

    @Override
    public void abort() {
        life.abort();
    }

    @Override
    public void close() {
        life.close();
    }

    @Override
    public boolean isClosed() {
        return life.closed();
    }

    @Override
    public String toString() {
        return "RcSubchannel{rail=" + rail + ", qpn=" + qp.qpNumber() + ", sendCredits=" + messages.sendCredits() + ", " + receive + "}";
    }
}
