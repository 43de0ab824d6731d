package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.RdmaProtocolException;
import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.internal.buffer.SlotPool;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The send queue of an {@link RcSubchannel}'s queue pair: posting frames from the send slots with
 * selective signalling, posting RDMA WRITEs, and retiring work requests in posting order when a
 * signalled completion stands for the unsignalled ones before it (verbs semantics: RC completes a send
 * queue in order; seed 001 &sect;4.3 keeps per-message verbs work low this way).
 *
 * <p>A credit-taking frame is held back until the next one comes or {@link #flush()} runs, then posted
 * unsignalled except every {@code signalInterval}-th; the last of a burst is always signalled, so no
 * completion waits on traffic that never comes. Control frames are posted signalled at once.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RcSendQueue {
    /** Send work requests beyond the send buffers: a provider may report a completion before it retires the work request. */
    static final int HEADROOM = 8;
    /** Upper bound of the unsignalled run: DATA/RTS sends posted between two signalled ones. */
    private static final int MAX_SIGNAL_INTERVAL = 16;
    private static final long NO_TOKEN = WorkRequestTokens.NONE;

    private final RcSubchannel channel;
    private final QueuePair qp;
    private final SlotPool slots;
    private final int rail;
    private final long[] tokens;
    /** Work request ids in posting order (SENDs and WRITEs), {@code head} to {@code tail}. */
    private final long[] posted;
    private final int postedMask;
    private long head;
    private long tail;
    private final int signalInterval;
    private int unsignaledRun;
    /** A credit-taking frame encoded but not yet posted (-1 if none). */
    private int deferredSlot = -1;
    private int deferredLength;
    private FrameType deferredType = FrameType.DATA;
    private final SendWorkRequest wr = new SendWorkRequest();
    private int framesInFlight;
    private int writesInFlight;
    private int readsInFlight;
    private long sendsPosted;
    private long sendCompletions;
    /** Frames posted, by {@link FrameType#code()}: plain counters of the progress thread. */
    private final long[] sentByType = new long[FrameType.MAX_CODE + 1];

    RcSendQueue(RcSubchannel channel, QueuePair qp, SlotPool slots, int rail, int maxWrites) {
        this.channel = channel;
        this.qp = qp;
        this.slots = slots;
        this.rail = rail;
        int sendBuffers = slots.capacity();
        this.tokens = new long[sendBuffers];
        this.posted = new long[Integer.highestOneBit(sendBuffers + HEADROOM + maxWrites + 1) << 1];
        this.postedMask = posted.length - 1;
        this.signalInterval = Math.max(1, Math.min(MAX_SIGNAL_INTERVAL, sendBuffers / 4));
    }

    int framesInFlight() {
        return framesInFlight;
    }

    int writesInFlight() {
        return writesInFlight;
    }

    int readsInFlight() {
        return readsInFlight;
    }

    long sendsPosted() {
        return sendsPosted;
    }

    long sendCompletions() {
        return sendCompletions;
    }

    long framesSent(FrameType type) {
        return sentByType[type.code()];
    }

    /** Marks send slot {@code slot} as holding no frame with a token yet (a packed frame being filled). */
    void clearToken(int slot) {
        tokens[slot] = NO_TOKEN;
    }

    /** Posts a control frame, signalled (it also retires the unsignalled frames posted before it). */
    void post(int slot, int length, long token, FrameType type) {
        postDeferredUnsignaled();
        setToken(slot, token);
        unsignaledRun = 0;
        postNow(slot, length, true, type);
    }

    /** Posts a credit-taking frame with selective signalling (held back until the next one or {@link #flush()}). */
    void postBatched(int slot, int length, long token, FrameType type) {
        setToken(slot, token);
        if (channel.isFailed()) {
            // the QP is in ERROR: posted now, it completes flushed like any other
            postNow(slot, length, true, type);
            return;
        }
        if (deferredSlot >= 0) {
            int prev = deferredSlot;
            boolean signal = ++unsignaledRun >= signalInterval;
            if (signal) {
                unsignaledRun = 0;
            }
            deferredSlot = -1;
            postNow(prev, deferredLength, signal, deferredType);
            if (channel.isFailed()) {
                postNow(slot, length, true, type);
                return;
            }
        }
        deferredSlot = slot;
        deferredLength = length;
        deferredType = type;
    }

    private void setToken(int slot, long token) {
        tokens[slot] = token;
        if (token != NO_TOKEN) {
            framesInFlight++;
        }
    }

    /** Posts the frame held back, unsignalled (something signalled follows at once). */
    void postDeferredUnsignaled() {
        if (deferredSlot >= 0) {
            int prev = deferredSlot;
            deferredSlot = -1;
            postNow(prev, deferredLength, false, deferredType);
        }
    }

    /** Posts the frame held back, signalled: after every pass that may have sent. */
    void flush() {
        if (deferredSlot >= 0) {
            int prev = deferredSlot;
            deferredSlot = -1;
            unsignaledRun = 0;
            postNow(prev, deferredLength, true, deferredType);
        }
    }

    /** @param type the frame's type, counted once posted (passed in: reading it back from the buffer costs a load per post) */
    private void postNow(int slot, int length, boolean signaled, FrameType type) {
        long wrId = WorkRequestTokens.wrId(WorkRequestTokens.WR_SEND, slot);
        wr.reset().wrId(wrId).opcode(WrOpcode.SEND).signaled(signaled).sge(slots.address(slot), length, slots.lkey());
        try {
            if (!qp.postSend(wr)) {
                // failed before the buffer returns: the connection's onFailure still finds the frame to send again
                channel.fail(new RdmaTransportException("send queue of rail " + rail
                    + " is full; sendBuffers exceeds the QP's maxSendWr", null, null));
                slots.release(slot);
                return;
            }
        } catch (VerbsException e) {
            channel.fail(new RdmaTransportException("posting a send on rail " + rail + " failed: " + e.getMessage(), e.status(), e));
            slots.release(slot);
            return;
        }
        posted[(int) (tail++ & postedMask)] = wrId;
        sendsPosted++;
        sentByType[type.code()]++;
    }

    /**
     * Posts a signalled RDMA WRITE of {@code length} bytes from {@code localAddress} to
     * {@code remoteAddress} (signalled so that WRITEs in flight count against the send queue).
     *
     * @return false if it could not be posted (the channel failed)
     */
    boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length) {
        return postWrite(localAddress, lkey, remoteAddress, rkey, length, -1, true);
    }

    /**
     * {@link #postWrite(long, int, long, int, int)} whose completion is reported with {@code tag} (&ge; 0)
     * through {@link RcSubchannel#onWriteRetired}; -1 reports none (a rendezvous stripe: its FIN reports).
     * Unsignalled ({@code signaled} false) it is retired, and reported, when a later signalled work request
     * completes ({@link #retireBefore}).
     */
    boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag, boolean signaled) {
        postDeferredUnsignaled();
        if (channel.isFailed()) {
            return false;
        }
        writesInFlight++;
        long wrId = WorkRequestTokens.wrId(WorkRequestTokens.WR_WRITE, tag + 1);
        wr.reset().wrId(wrId).opcode(WrOpcode.RDMA_WRITE).signaled(signaled).remoteAddress(remoteAddress).rkey(rkey);
        if (length > 0) {
            wr.sge(localAddress, length, lkey);
        }
        try {
            if (!qp.postSend(wr)) {
                writesInFlight--;
                channel.fail(new RdmaTransportException("send queue of rail " + rail + " is full while posting an RDMA WRITE", null, null));
                return false;
            }
            posted[(int) (tail++ & postedMask)] = wrId;
            return true;
        } catch (VerbsException e) {
            writesInFlight--;
            channel.fail(new RdmaTransportException("posting an RDMA WRITE on rail " + rail + " failed: " + e.getMessage(), e.status(), e));
            return false;
        }
    }

    /**
     * Posts a signalled RDMA READ of {@code length} bytes from the peer's {@code remoteAddress} into
     * {@code localAddress}; its completion reports {@code token} (the READ rendezvous, seed 001 &sect;3).
     *
     * @return false if it could not be posted (the channel failed)
     */
    boolean postRead(long localAddress, int lkey, long remoteAddress, int rkey, int length, long token) {
        postDeferredUnsignaled();
        if (channel.isFailed()) {
            return false;
        }
        long wrId = WorkRequestTokens.readWrId(token);
        readsInFlight++;
        wr.reset().wrId(wrId).opcode(WrOpcode.RDMA_READ).signaled(true).remoteAddress(remoteAddress).rkey(rkey);
        if (length > 0) {
            wr.sge(localAddress, length, lkey);
        }
        try {
            if (!qp.postSend(wr)) {
                readsInFlight--;
                channel.fail(new RdmaTransportException("send queue of rail " + rail + " is full while posting an RDMA READ", null, null));
                return false;
            }
            posted[(int) (tail++ & postedMask)] = wrId;
            return true;
        } catch (VerbsException e) {
            readsInFlight--;
            channel.fail(new RdmaTransportException("posting an RDMA READ on rail " + rail + " failed: " + e.getMessage(), e.status(), e));
            return false;
        }
    }

    /**
     * Posts a signalled atomic (fetch-and-add, or compare-and-swap) on the peer's 8-byte word; the original
     * value lands at {@code localAddress}. Its work-request id is a READ's, so its completion takes the
     * READ path and reports {@code token}.
     *
     * @return false if it could not be posted (the channel failed)
     */
    boolean postAtomic(boolean fetchAdd, long localAddress, int lkey, long remoteAddress, int rkey, long compareAdd, long swap,
                       long token) {
        postDeferredUnsignaled();
        if (channel.isFailed()) {
            return false;
        }
        long wrId = WorkRequestTokens.readWrId(token);
        readsInFlight++;
        wr.reset().wrId(wrId).opcode(fetchAdd ? WrOpcode.ATOMIC_FETCH_AND_ADD : WrOpcode.ATOMIC_CMP_AND_SWP).signaled(true)
            .remoteAddress(remoteAddress).rkey(rkey).compareAdd(compareAdd).swap(swap).sge(localAddress, Long.BYTES, lkey);
        String what = fetchAdd ? "an atomic fetch-and-add" : "an atomic compare-and-swap";
        try {
            if (!qp.postSend(wr)) {
                readsInFlight--;
                channel.fail(new RdmaTransportException("send queue of rail " + rail + " is full while posting " + what, null, null));
                return false;
            }
            posted[(int) (tail++ & postedMask)] = wrId;
            return true;
        } catch (VerbsException e) {
            readsInFlight--;
            channel.fail(new RdmaTransportException("posting " + what + " on rail " + rail + " failed: " + e.getMessage(), e.status(), e));
            return false;
        }
    }

    /** Drops the frame held back (never posted, so it never completes). */
    void dropDeferred() {
        if (deferredSlot >= 0) {
            int slot = deferredSlot;
            deferredSlot = -1;
            if (tokens[slot] != NO_TOKEN) {
                framesInFlight--;
            }
            slots.release(slot);
        }
    }

    /** A send-queue completion ({@code wc} of a SEND or WRITE work request). */
    void onCompletion(WorkCompletion wc) {
        long wrId = wc.wrId();
        if (!retireBefore(wrId)) {
            return;
        }
        if (WorkRequestTokens.wrKind(wrId) == WorkRequestTokens.WR_WRITE) {
            writesInFlight--;
            if (!wc.isSuccess()) {
                channel.fail(channel.transportError("RDMA WRITE", wc));
            } else {
                retireWrite(wrId);
            }
            return;
        }
        if (WorkRequestTokens.wrKind(wrId) == WorkRequestTokens.WR_READ) {
            readsInFlight--;
            if (!wc.isSuccess()) {
                channel.fail(channel.transportError(wc.opcode() == io.rdmaflux.verbs.WcOpcode.RDMA_READ ? "RDMA READ" : "atomic", wc));
            } else {
                channel.onReadRetired(WorkRequestTokens.readToken(wrId));
            }
            return;
        }
        sendCompletions++;
        retireSend(WorkRequestTokens.wrSlot(wrId), wc);
    }

    /**
     * Retires, as successful, the unsignalled work requests posted before {@code wrId} (RC completes its
     * send queue in order, so they completed before it) and removes {@code wrId} from the posting order.
     *
     * @return false if {@code wrId} was never posted (the channel then fails) or the channel closed meanwhile
     */
    private boolean retireBefore(long wrId) {
        for (;;) {
            if (head == tail) {
                channel.fail(new RdmaProtocolException("rail " + rail + ": completion for work request " + Long.toHexString(wrId)
                    + " which is not outstanding on the send queue"));
                return false;
            }
            long id = posted[(int) (head++ & postedMask)];
            if (id == wrId) {
                return true;
            }
            if (channel.isClosed()) {
                return false;
            }
            if (WorkRequestTokens.wrKind(id) == WorkRequestTokens.WR_WRITE) {
                writesInFlight--;
                retireWrite(id);
            } else if (WorkRequestTokens.wrKind(id) == WorkRequestTokens.WR_READ) {
                // RC completes in order: a READ before a later completion succeeded
                readsInFlight--;
                channel.onReadRetired(WorkRequestTokens.readToken(id));
            } else {
                retireSend(WorkRequestTokens.wrSlot(id), null);
            }
        }
    }

    /** A WRITE completed (or is implied complete): a tagged one is reported. */
    private void retireWrite(long wrId) {
        int slot = WorkRequestTokens.wrSlot(wrId);
        if (slot != 0) {
            channel.onWriteRetired(slot - 1);
        }
    }

    /** A SEND completed: its slot returns to the pool, its token to the channel. {@code wc} null: implied success. */
    private void retireSend(int slot, @Nullable WorkCompletion wc) {
        long token = tokens[slot];
        boolean ok = wc == null || wc.isSuccess();
        if (!ok) {
            // failed while the buffer is still held: the connection's onFailure finds this frame to send again
            channel.fail(channel.transportError("send", wc));
        }
        slots.release(slot);
        if (token != NO_TOKEN) {
            framesInFlight--;
            if (ok) {
                channel.onSendRetired(token);
            }
        }
    }

    /**
     * Every credit-taking frame in a send slot without a completion (posted, held back, or whose post
     * failed), except the packed frame still being filled in {@code openSlot}.
     */
    void forEachUnacked(Channel.UnackedSend visitor, DirectBuffer memory, int openSlot) {
        for (int slot = 0; slot < tokens.length; slot++) {
            if (slots.isAcquired(slot) && tokens[slot] != NO_TOKEN && slot != openSlot) {
                visitor.frame(tokens[slot], memory, slots.offset(slot));
            }
        }
    }
}
