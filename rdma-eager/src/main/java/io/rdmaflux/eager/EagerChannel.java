package io.rdmaflux.eager;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.ForwardingChannel;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.RtsFrameCodec;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The eager RDMA channel of one rail (seed 001 &sect;4.1&ndash;4.6): a decorator of the RC send/receive
 * channel (opened through the public {@code ChannelProvider.rcSendRecv()}) that sends a whole frame as
 * ONE RDMA WRITE into the peer's receive ring when it can, and over send/receive otherwise.
 *
 * <h2>Which frame goes where</h2>
 * A credit-taking frame that is whole &mdash; a single-fragment DATA frame, a packed DATA frame, an RTS
 * &mdash; goes into the ring when the peer offered its ring (it is in the peer's polling set), a ring
 * credit and a staging slot are free, and the frame fits the peer's slot: the slot carries exactly the
 * bytes the RC channel would SEND ({@link RingLayout}), so the receiver decodes it with the same frame
 * codecs and reports the same events. Everything else goes over the RC channel: the fragments of a
 * message larger than one frame (so the connection's per-rail reassembly sees a message's fragments in
 * order on one path), frames that find the ring full or revoked (seed 001 &sect;4.4&ndash;4.5), and all
 * control frames. A fragment that finds the RC channel without buffer credit while the ring had one
 * (so {@link #canSend()} said yes) is held here and posted as soon as the RC channel can; meanwhile
 * {@link #canSend()} answers false.
 *
 * <h2>Merging the two paths</h2>
 * Every frame carries its message's PSN, whichever path it takes. The receiver keeps the rail's frames
 * in the order they were sent (issue 19): the ring's WRITEs and the SENDs share the rail's queue pair,
 * and RC places a WRITE before a later SEND on it completes, so before a frame that came over
 * send/receive is reported, the ring frames already placed with an earlier PSN are
 * ({@link RingPolling#pollBefore}); the RC channel's completions are taken before the ring is polled,
 * which orders the other case. So a ring that overflows to send/receive (more frames in flight than
 * slots) still leaves the connection on its in-order path. Anything else out of order (other rails, a
 * re-send after a failover) the connection's PSN/ESN window ({@code InboundDelivery}) restores. Only
 * whole messages use the ring, so no reassembly spans both paths.
 *
 * <h2>Credits</h2>
 * The ring adds {@code slots} receive slots next to the RC channel's receive buffers; both share the
 * connection's message credits, which stay as they are ({@code request(n)} bounds them), because
 * {@link #freeReceiveBuffers()} counts the node's {@code receiveBuffers} per rail minus what the
 * application holds of both. Ring slots are freed when the application releases the message, in any
 * order; the sender's limit moves over freed slots only contiguously ({@link RingReceiver}) and travels
 * piggybacked on every ring frame back and in CREDIT control messages ({@link RingPolling}).
 *
 * <h2>Control</h2>
 * The ring is advertised, revoked and credited in-band ({@link EagerControlCodec}) as
 * {@code CHANNEL_CONTROL} frames of the RC channel, right after connect and whenever the node's
 * {@link PollingSet} promotes or demotes the rail: {@link RingPolling} sends them for this side's ring,
 * {@link RingSenderControl} takes them for the peer's.
 *
 * <p><b>Concurrency:</b> progress thread only, after construction (the Channel SPI's rule).
 */
public final class EagerChannel extends ForwardingChannel {
    /** The decorated RC send/receive channel ({@link #delegate}). */
    private final Channel rc;
    private final EagerChannelProvider provider;
    private final RingReceiver ring;
    private final RingSender sender;
    private final RingPolling polling;
    private final PollingSet pollingSet;
    private final int rcSlots;
    private final int receiveBuffers;
    private final RingSenderControl control;
    private final RcEventsRelay inner;
    private @Nullable ChannelEvents events;
    private boolean failed;
    private boolean closed;
    /** The current duty cycle's time (ring WRITEs are posted within it). */
    private long nowNs;
    // a fragment held until the RC channel has a buffer credit
    private @Nullable RdmaMessage deferred;
    private int deferredOffset;
    private int deferredLength;
    private boolean deferredFirst;
    private boolean deferredLast;
    private int deferredPsn;
    private long deferredToken;
    // the packed frame being filled in the ring's staging slot
    private boolean packOnRing;
    private int packFrameOffset;
    private int packPsn;
    private int packPosition;
    private int packCount;
    private long ringBytesSent;
    private long ringMessagesSent;
    private long ringPacksSent;
    private long ringRtsSent;
    private long fallbackFramesSent;
    private long deferrals;
    private final long[] ringFramesReceivedByType = new long[FrameType.MAX_CODE + 1];

    EagerChannel(Channel rc, EagerChannelProvider provider, RingReceiver ring, RingSender sender, PollingSet set, EagerPolicy policy,
                 int receiveBuffers) {
        super(rc);
        this.rc = rc;
        this.provider = provider;
        this.ring = ring;
        this.sender = sender;
        this.rcSlots = rc.receiveSlots();
        this.receiveBuffers = receiveBuffers;
        this.polling = new RingPolling(this, ring, set, policy);
        this.pollingSet = set;
        this.control = new RingSenderControl(this, rc, sender, polling);
        this.inner = new RcEventsRelay(this, polling, control);
        rc.events(inner);
    }

    // ---------------------------------------------------------------- identity and state

    @Override
    public ChannelKind kind() {
        return ChannelKind.EAGER_RDMA;
    }

    @Override
    public void events(ChannelEvents events) {
        this.events = events;
    }

    @Override
    public boolean isFailed() {
        return failed || rc.isFailed();
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    // ---------------------------------------------------------------- duty cycle

    /** The RC channel's completions are every arrival, except what the ring brings: see {@link #waitsOnlyForSignals}. */
    @Override
    public boolean signalArrivals(Runnable hint) {
        return rc.signalArrivals(hint);
    }

    /**
     * Only while this side's ring is not polled (not in the node's polling set: the peer sends over RC) and no
     * flush timer, REVOKE_ACK or deferred frame is pending: a ring in the polling set is written by the peer's
     * RDMA WRITEs, which complete nothing here, so its connection is visited every duty cycle (the polling set
     * bounds how many, as MVAPICH's does).
     */
    @Override
    public boolean waitsOnlyForSignals() {
        return rc.waitsOnlyForSignals() && polling.state() == RingPolling.State.IDLE && !control.revokeAckDue() && deferred == null
            && !sender.flushPending();
    }

    @Override
    public int doWork(long nowNs) {
        if (closed) {
            return 0;
        }
        this.nowNs = nowNs;
        int work = rc.doWork(nowNs);
        ChannelEvents l = events;
        if (l != null) {
            work += polling.doWork(nowNs, rc, l);
        }
        if (control.revokeAckDue()) {
            work += control.sendRevokeAck();
        }
        if (deferred != null && rc.canSend()) {
            RdmaMessage m = deferred;
            deferred = null;
            rc.sendData(m, deferredOffset, deferredLength, deferredFirst, deferredLast, deferredPsn, deferredToken);
            fallbackFramesSent++;
            work++;
        }
        if (sender.flushDue(nowNs) && !failed && rc.canPostWrite()) {
            // unsignalled WRITEs carry frames no credit confirmed and traffic stopped: retire them
            sender.postFlush(rc);
            work++;
        }
        return work;
    }

    // ---------------------------------------------------------------- credit-taking frames

    /** Whether a whole frame of the largest size could go into the peer's ring now. */
    private boolean ringReady() {
        return sender.canWrite(FrameHeader.LENGTH + rc.maxFramePayloadBytes()) && rc.canPostWrite();
    }

    private boolean ringTakes(int frameBytes) {
        return sender.canWrite(frameBytes) && rc.canPostWrite();
    }

    @Override
    public boolean canSend() {
        return deferred == null && !failed && (rc.canSend() || ringReady());
    }

    @Override
    public long sendCredits() {
        return rc.sendCredits() + sender.credits();
    }

    @Override
    public int freeSendBuffers() {
        return rc.freeSendBuffers() + (sender.active() ? sender.stagingFree() : 0);
    }

    private int creditWord() {
        ChannelEvents l = events;
        return FrameHeader.packCredits(0, l == null ? 0 : l.takeMessageCreditTotal());
    }

    @Override
    public void sendData(RdmaMessage message, int srcOffset, int length, boolean first, boolean last, int psn, long token) {
        if (first && last && ringTakes(FrameHeader.LENGTH + length)) {
            UnsafeBuffer mem = sender.memory();
            int fo = sender.nextFrameOffset();
            DataFrameCodec.encodeHeader(mem, fo, true, true, 0, psn, creditWord(), length, message.lengthBytes());
            message.writeTo(mem, DataFrameCodec.payloadOffset(fo));
            ringBytesSent += length;
            ringMessagesSent++;
            postRing(FrameHeader.LENGTH + length, token);
            return;
        }
        if (rc.canSend()) {
            fallbackFramesSent++;
            rc.sendData(message, srcOffset, length, first, last, psn, token);
            return;
        }
        // a fragment (or a frame too large for the peer's slots) while only the ring had credit: hold it
        deferred = message;
        deferredOffset = srcOffset;
        deferredLength = length;
        deferredFirst = first;
        deferredLast = last;
        deferredPsn = psn;
        deferredToken = token;
        deferrals++;
    }

    private void postRing(int frameLength, long token) {
        sender.write(rc, frameLength, polling.takePiggybackCredit(), token, nowNs);
    }

    @Override
    public void openPack(int psn) {
        if (ringReady()) {
            packOnRing = true;
            packFrameOffset = sender.nextFrameOffset();
            packPsn = psn;
            packCount = 0;
            packPosition = DataFrameCodec.payloadOffset(packFrameOffset);
            return;
        }
        packOnRing = false;
        fallbackFramesSent++;
        rc.openPack(psn);
    }

    @Override
    public void packAppend(RdmaMessage message) {
        if (!packOnRing) {
            rc.packAppend(message);
            return;
        }
        UnsafeBuffer mem = sender.memory();
        int len = message.lengthBytes();
        int at = DataFrameCodec.putPackedLength(mem, packPosition, len);
        message.writeTo(mem, at);
        packPosition = at + len;
        packCount++;
    }

    @Override
    public void closePack(long token) {
        if (!packOnRing) {
            rc.closePack(token);
            return;
        }
        packOnRing = false;
        int payload = packPosition - DataFrameCodec.payloadOffset(packFrameOffset);
        int len = DataFrameCodec.encodePackedHeader(sender.memory(), packFrameOffset, 0, packPsn, creditWord(), payload, packCount);
        ringBytesSent += payload;
        ringMessagesSent += packCount;
        ringPacksSent++;
        postRing(len, token);
    }

    @Override
    public void sendRts(int psn, int messageLength, long token) {
        if (ringTakes(RtsFrameCodec.LENGTH)) {
            int len = RtsFrameCodec.encode(sender.memory(), sender.nextFrameOffset(), psn, creditWord(), messageLength);
            ringRtsSent++;
            postRing(len, token);
            return;
        }
        fallbackFramesSent++;
        rc.sendRts(psn, messageLength, token);
    }

    // ---------------------------------------------------------------- rendezvous, control, one-sided: the RC channel

    // the READ rendezvous (seed 001 §3), control frames and one-sided work (seed 002) are the RC channel's,
    // forwarded by ForwardingChannel: large messages never take the ring

    /**
     * One-sided WRITEs (seed 002) go on the RC channel's queue pair beside the ring's WRITEs, which take the
     * upper half of the tag space.
     *
     * @param tag in [0, 2^27)
     * @throws IllegalArgumentException if {@code tag} is in the ring's half
     */
    @Override
    public boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag) {
        return postWrite(localAddress, lkey, remoteAddress, rkey, length, tag, true);
    }

    @Override
    public boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag, boolean signaled) {
        if (tag < 0 || RingSender.isRingTag(tag)) {
            throw new IllegalArgumentException("WRITE tag " + tag + " on an eager rail must be in [0, 2^27): the ring's WRITEs use the upper half");
        }
        return rc.postWrite(localAddress, lkey, remoteAddress, rkey, length, tag, signaled);
    }

    /** The eager protocol's control messages use the RC channel's CHANNEL_CONTROL frames: none for others. */
    @Override
    public boolean sendChannelControl(DirectBuffer src, int offset, int length) {
        return false;
    }

    @Override
    public boolean carriesOneSided() {
        return !isFailed() && !closed && rc.carriesOneSided();
    }

    // ---------------------------------------------------------------- receive buffers: the RC channel's, then the ring's

    /** The slot number ring slot {@code ringSlot} has in the events: after the RC channel's receive buffers. */
    int ringEventSlot(int ringSlot) {
        return rcSlots + ringSlot;
    }

    @Override
    public void releaseReceiveBuffer(int slot) {
        if (slot < rcSlots) {
            rc.releaseReceiveBuffer(slot);
        } else {
            ring.release(slot - rcSlots);
        }
    }

    @Override
    public int receiveSlots() {
        return rcSlots + ring.slots();
    }

    @Override
    public int freeReceiveBuffers() {
        if (isFailed() || closed) {
            return 0;
        }
        return Math.max(0, receiveBuffers - rc.receiveBuffersHeld() - ring.held());
    }

    @Override
    public int receiveBuffersHeld() {
        return rc.receiveBuffersHeld() + ring.held();
    }

    // ---------------------------------------------------------------- counters

    @Override
    public int sendBuffersInUse() {
        return rc.sendBuffersInUse() + sender.inFlight();
    }

    @Override
    public int sendBufferCount() {
        return rc.sendBufferCount() + sender.stagingSlots();
    }

    @Override
    public long framesSent(FrameType type) {
        long ringFrames = type == FrameType.DATA ? sender.framesSent() - ringRtsSent : type == FrameType.RTS ? ringRtsSent : 0;
        return rc.framesSent(type) + ringFrames;
    }

    @Override
    public long framesReceived(FrameType type) {
        return rc.framesReceived(type) + ringFramesReceivedByType[type.code()];
    }

    @Override
    public long packedFramesSent() {
        return rc.packedFramesSent() + ringPacksSent;
    }

    /** The RC channel's frames in flight and the ring frames neither retired nor confirmed by the peer's credit. */
    @Override
    public int framesInFlight() {
        return rc.framesInFlight() + sender.unreported();
    }

    @Override
    public long bytesSent() {
        return rc.bytesSent() + ringBytesSent;
    }

    @Override
    public long messagesCompleted() {
        return rc.messagesCompleted() + ringMessagesSent;
    }

    /** The node's polling set this rail's ring belongs to (seed 001 &sect;4.6); any thread. */
    PollingSet pollingSet() {
        return pollingSet;
    }

    /** A snapshot of this rail's eager counters; progress thread (elsewhere it may be stale). */
    public EagerStats stats() {
        return new EagerStats(rail(), polling.state().name(), sender.active(), sender.framesSent(), fallbackFramesSent,
            ring.framesReceived(), inner.fallbackFramesReceived(), ring.tornSlotsSeen(), deferrals, polling.offersSent(), polling.revokesSent(),
            polling.creditsSent(), ring.held(), sender.signaledWrites(), sender.flushes());
    }

    // ---------------------------------------------------------------- failure and close

    @Override
    public void forEachUnackedSend(UnackedSend visitor) {
        rc.forEachUnackedSend(visitor);
        sender.forEachUnacked(visitor);
    }

    /** A protocol violation on the ring or in its control messages: fails the RC channel, which reports it. */
    void protocolFailure(RdmaException e) {
        if (!isFailed()) {
            failed = true;
            polling.leave();
            sender.revoke();
            ChannelEvents l = events;
            rc.abort();
            if (l != null) {
                l.onFailure(this, e);
            }
        }
    }

    @Override
    public Channel downgrade() {
        polling.leave();
        ring.close();
        sender.close();
        provider.unregister(this);
        closed = true;
        return rc;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        polling.leave();
        rc.close();
        ring.close();
        sender.close();
        provider.unregister(this);
    }

    /** A ring frame of {@code type} was polled. */
    void onRingFrame(FrameType type) {
        ringFramesReceivedByType[type.code()]++;
    }

    /** The piggybacked credit of a ring frame from the peer: its ring freed up to this (low 32 bits). */
    void onPiggybackedCredit(int freedLow32) {
        sender.onCredit(freedLow32);
        if (sender.hasConfirmed()) {
            reportConfirmed();
        }
    }

    /** The frames the peer's credit confirmed delivered (it polled and freed their slots) are reported sent. */
    private void reportConfirmed() {
        while (sender.hasConfirmed()) {
            reportSent(sender.nextConfirmed());
        }
    }

    private void reportSent(long token) {
        if (token != WorkRequestTokens.NONE && !failed) {
            ChannelEvents l = events;
            if (l != null && WorkRequestTokens.isReported(token)) {
                l.onSendCompleted(this, token);
            }
        }
    }

    @Override
    public String toString() {
        return "EagerChannel{rail=" + rail() + ", " + polling + ", " + sender + ", rc=" + rc + "}";
    }

    // ---------------------------------------------------------------- what the RC channel reports (RcEventsRelay)

    /** The connection's listener, or null before {@link #events} was set. */
    @Nullable ChannelEvents listener() {
        return events;
    }

    /** Ring frames reported ahead of a send/receive frame to keep the rail's order (diagnostics, tests). */
    long ringFramesTakenBeforeFallback() {
        return polling.takenBeforeFallback();
    }

    /** A ring WRITE posted with {@code tag} completed: the frame it carried is reported sent. */
    void onRingWriteCompleted(int tag) {
        reportSent(sender.onWriteCompleted(tag));
    }

    /** The RC channel failed: what the NIC placed in the ring before is delivered first, then the failure. */
    void onRcFailure(RdmaException error) {
        ChannelEvents l = events;
        // what the NIC placed in the ring before the failure is delivered first, as the RC channel's
        // completed receives are; a placed WRITE its sender had not seen retired or confirmed (unsignalled)
        // is sent again over another rail, and the connection drops that copy by its PSN
        if (l != null) {
            polling.pollAll(l);
        }
        failed = true;
        polling.leave();
        sender.revoke();
        if (l != null) {
            l.onFailure(this, error);
        }
    }
}
