package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.internal.buffer.SlotPool;
import io.rdmaflux.core.internal.credit.ReceiveCredits;
import io.rdmaflux.core.internal.srq.SrqReceiveShare;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The receive buffers of an {@link RcSubchannel} and the buffer credits they back (seed 001 &sect;3.1):
 * either the channel's own pool, every buffer kept posted on its QP, or (SRQ mode) its share of the rail's
 * shared receive queue, whose buffers the rail's credit budget lends as the subscriber's demand asks.
 * A DATA buffer counts as free for credit again when the application releases it, not when it is
 * delivered; a control frame's buffer is posted again as soon as the frame is read.
 *
 * <p>Owns the own pool (or the SRQ share) and the {@link ReceiveCredits}; the channel closes them
 * through {@link #close()}. A receive that cannot be posted fails the channel.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RcReceiveBuffers {
    private final RcSubchannel ch;
    private final QueuePair qp;
    /** This channel's own receive buffers, or null: its share of the rail's SRQ ({@link #srqShare}). */
    private final @Nullable SlotPool pool;
    private final @Nullable SrqReceiveShare srqShare;
    private final UnsafeBuffer memory;
    private final ReceiveWorkRequest recvWr = new ReceiveWorkRequest();
    /** DATA receive buffers, the most credits the peer can hold. */
    private final int dataBuffers;
    private final ReceiveCredits credits;

    /** Exactly one of {@code pool} and {@code srqShare} is non-null. */
    RcReceiveBuffers(RcSubchannel ch, QueuePair qp, @Nullable SlotPool pool, @Nullable SrqReceiveShare srqShare, int dataBuffers,
                     int creditThreshold) {
        this.ch = ch;
        this.qp = qp;
        this.pool = pool;
        this.srqShare = srqShare;
        this.memory = pool != null ? pool.memory() : srqShare.memory();
        this.dataBuffers = dataBuffers;
        this.credits = new ReceiveCredits(dataBuffers, creditThreshold);
    }

    /** The memory of every receive buffer (frames are read from it at {@link #offset}). */
    UnsafeBuffer memory() {
        return memory;
    }

    /** Own pool: posts every buffer on the QP (the SRQ's buffers are posted by the rail). */
    void postAll() {
        if (pool != null) {
            for (int i = pool.capacity(); i > 0; i--) {
                repost(pool.acquire());
            }
        }
    }

    /** Posts buffer {@code slot} again: on this channel's QP, or back on the rail's SRQ. */
    void repost(int slot) {
        if (srqShare != null) {
            srqShare.repost(slot);
            return;
        }
        recvWr.wrId(WorkRequestTokens.WR_RECV | slot).sge(pool.address(slot), pool.slotBytes(), pool.lkey());
        try {
            if (!qp.postReceive(recvWr)) {
                ch.fail(new RdmaTransportException("receive queue of rail " + ch.rail() + " is full", null, null));
            }
        } catch (VerbsException e) {
            if (!ch.isClosed()) {
                ch.fail(new RdmaTransportException("posting a receive on rail " + ch.rail() + " failed: " + e.getMessage(), e.status(), e));
            }
        }
    }

    /** A DATA buffer the application released: reposted, and it counts as free for credits again. */
    void release(int slot) {
        credits.onBufferFreed();
        if (srqShare != null) {
            srqShare.released();
            // the buffer is the rail's, not this channel's: back on the SRQ whatever this channel's state
            if (!ch.isClosed()) {
                srqShare.repost(slot);
            }
        } else if (!ch.isClosed() && !ch.isFailed()) {
            repost(slot);
        } else {
            pool.release(slot);
        }
    }

    /** A buffer this channel will not repost on its own QP (its frame failed the checks): back to its pool, or to the SRQ. */
    void drop(int slot) {
        if (srqShare != null) {
            if (!ch.isClosed()) {
                srqShare.repost(slot);
            }
        } else {
            pool.release(slot);
        }
    }

    /**
     * A receive completed: the slot of this channel its frame is in, or -1 if the completion failed or the
     * peer overran this channel's share of the SRQ (the channel then failed, the buffer went back).
     */
    int onReceived(WorkCompletion wc) {
        int slot = WorkRequestTokens.wrSlot(wc.wrId());
        if (srqShare != null) {
            if (!wc.isSuccess()) {
                // a flushed or failed receive of the SRQ: its buffer is the rail's, posted again
                srqShare.pool().repost(slot);
                ch.fail(ch.transportError("receive", wc));
                return -1;
            }
            slot = srqShare.adopt(slot);
            if (slot < 0) {
                ch.fail(new RdmaTransportException("the peer sent more frames on rail " + ch.rail() + " than its credits and the "
                    + slots() + " receive buffers of this channel allow", null, null));
                return -1;
            }
        } else if (!wc.isSuccess()) {
            pool.release(slot);
            ch.fail(ch.transportError("receive", wc));
            return -1;
        }
        return slot;
    }

    /** Offset of buffer {@code slot} in {@link #memory()}. */
    int offset(int slot) {
        return pool != null ? pool.offset(slot) : srqShare.offset(slot);
    }

    /** Receive buffers (DATA and control), the range of slot numbers. */
    int slots() {
        return pool != null ? pool.capacity() : srqShare.capacity();
    }

    /** A DATA or RTS frame arrived: it used one of the credits the peer held. @return false if it held none */
    boolean onDataArrived() {
        return credits.onDataArrived();
    }

    /** DATA buffers holding a message the application has not released. */
    int held() {
        return credits.held();
    }

    /** Free DATA buffers (capacity minus those the application holds). */
    int free() {
        return dataBuffers - credits.held();
    }

    /** Credits announced in the handshake, granted before any demand. */
    void grantInitial(int n) {
        credits.grantInitial(n);
    }

    /** Granted credits not yet sent to the peer, now taken for the credit word of a frame being sent. */
    int takePending() {
        return credits.takePending();
    }

    /**
     * Grants what free buffers allow; in SRQ mode what the rail's budget lends for the subscriber's demand
     * beyond the credits the peer holds (at most this channel's free DATA buffers), and only while
     * {@code open}.
     */
    void grant(@Nullable ChannelEvents l, boolean open) {
        if (srqShare == null) {
            credits.grant();
        } else if (open) {
            srqShare.lend(credits, l == null ? 0 : l.receiveDemand());
        }
    }

    /** Whether enough credit accumulated for an explicit CREDIT frame. */
    boolean explicitCreditDue() {
        return credits.explicitCreditDue();
    }

    /** Whether the buffers are a share of the rail's SRQ. */
    boolean shared() {
        return srqShare != null;
    }

    /** SRQ mode: buffers of the rail's shared pool this channel holds (credits out plus messages held); 0 otherwise. */
    int sharedHeld() {
        return srqShare == null ? 0 : srqShare.budgetHeld();
    }

    /** SRQ mode: {@code hint} runs when another connection gives buffers of the shared pool back. */
    void onRoom(Runnable hint) {
        srqShare.onRoom(hint);
    }

    /** SRQ mode: where completions of this channel's QP still in a shared CQ go after close (back to the SRQ). */
    io.rdmaflux.verbs.CompletionSink afterClose() {
        return srqShare == null ? wc -> { } : srqShare.afterClose();
    }

    /** SRQ mode with the channel's own CQ: returns the SRQ's buffers this QP still had (before the QP closes). */
    void drain(io.rdmaflux.verbs.CompletionQueue cq) {
        if (srqShare != null) {
            srqShare.drain(qp, cq);
        }
    }

    /** Deregisters the own pool, or gives the SRQ share back. */
    void close() {
        if (pool != null) {
            pool.close();
        } else {
            srqShare.close();
        }
    }

    @Override
    public String toString() {
        return credits.toString();
    }
}
