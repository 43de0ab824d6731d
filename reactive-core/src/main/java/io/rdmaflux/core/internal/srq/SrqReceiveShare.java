package io.rdmaflux.core.internal.srq;

import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.internal.credit.ReceiveCredits;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.VerbsException;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Arrays;

/**
 * One RC channel's view of its rail's {@link SharedReceivePool}: the buffers its QP consumed from the SRQ,
 * numbered by <em>local</em> slots {@code [0, capacity)} so the connection's per-slot state (message views,
 * packed shares) stays as small as with a pool of its own; and its {@link SrqCreditBudget} account.
 *
 * <p>A completion names the pool's slot; {@link #adopt} maps it to a free local slot. {@link #repost}
 * ends the mapping and posts the buffer on the SRQ again. {@code capacity} is the channel's DATA buffers
 * plus its control buffers: the peer sends DATA only against credits (at most the DATA buffers held) and
 * each control frame is reposted as soon as it is read, so a peer that keeps to the protocol never makes
 * an adopt find no local slot; one that does not gets its channel failed ({@link #adopt} returns -1).
 *
 * <p><b>Concurrency:</b> the owning channel's thread (the progress thread), like the channel.
 */
public final class SrqReceiveShare {
    private final SharedReceivePool pool;
    private final SrqCreditBudget.Account account;
    private final int[] global;
    private final int[] free;
    private int freeCount;
    private boolean closed;

    public SrqReceiveShare(SharedReceivePool pool, int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity > 0 required but it was " + capacity);
        }
        this.pool = pool;
        this.account = pool.budget().open();
        this.global = new int[capacity];
        Arrays.fill(global, -1);
        this.free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        this.freeCount = capacity;
    }

    /**
     * A receive completed into the pool's buffer {@code poolSlot}: maps it to a local slot.
     *
     * @return the local slot, or -1 if every local slot is in use (the peer sent beyond its credits and the
     *     control reserve); the buffer is then reposted at once
     */
    public int adopt(int poolSlot) {
        if (freeCount == 0 || closed) {
            pool.repost(poolSlot);
            return -1;
        }
        int local = free[--freeCount];
        global[local] = poolSlot;
        return local;
    }

    /** Posts the buffer of {@code local} on the SRQ again and frees the local slot. */
    public void repost(int local) {
        int g = global[local];
        if (g < 0) {
            throw new IllegalStateException("local receive slot " + local + " reposted but it holds no buffer (double free)");
        }
        global[local] = -1;
        free[freeCount++] = local;
        pool.repost(g);
    }

    /** Byte offset of {@code local}'s buffer in {@link #memory()}. */
    public int offset(int local) {
        return pool.region().offset(global[local]);
    }

    public UnsafeBuffer memory() {
        return pool.region().memory();
    }

    public int slotBytes() {
        return pool.region().slotBytes();
    }

    /** Local slots: the channel's receive buffers, DATA and control. */
    public int capacity() {
        return global.length;
    }

    /** Local slots holding a buffer now. */
    public int adopted() {
        return global.length - freeCount;
    }

    public SharedReceivePool pool() {
        return pool;
    }

    /** The most unused credits the peer may hold ({@link SharedReceivePool#creditWindow()}). */
    public int creditWindow() {
        return pool.creditWindow();
    }

    /**
     * Asks the budget for up to {@code want} more buffer credits (see {@link SrqCreditBudget}).
     *
     * @return credits granted
     */
    public int reserve(int want) {
        return pool.budget().reserve(account, want);
    }

    /**
     * Grants the peer the buffer credits the subscriber's {@code demand} (messages) wants beyond those it
     * holds, at most the channel's free DATA buffers and the pool's {@link #creditWindow()} of unused ones,
     * as far as the budget lends them.
     *
     * @return credits granted
     */
    public int lend(ReceiveCredits credits, long demand) {
        long uncovered = demand - credits.peerHolds();
        // unused credits stay lent until the peer sends: at most the pool's window of them
        long window = creditWindow() - (long) credits.peerHolds();
        int want = (int) Math.max(0, Math.min(Math.min(credits.grantable(), uncovered), window));
        int lent = reserve(want);
        return lent > 0 ? credits.grant(lent) : 0;
    }

    /**
     * Before the channel's own QP and CQ go: the receives the QP took from the SRQ and whose completions
     * were not polled yet go back to the SRQ, so no buffer of the rail is lost with the CQ (and none
     * reaches the closed connection's frames).
     */
    public void drain(QueuePair qp, CompletionQueue cq) {
        try {
            qp.toError();
        } catch (VerbsException ignored) {
            // already in ERROR or closed: what is in the CQ is drained either way
        }
        CompletionSink sink = afterClose();
        try {
            while (cq.poll(32, sink) > 0) {
                // drained batch by batch
            }
        } catch (VerbsException ignored) {
            // a closed CQ holds nothing more
        }
    }

    /** Where completions of the closed channel's QP go (a shared CQ's): SRQ receives are reposted, the rest dropped. */
    public CompletionSink afterClose() {
        return wc -> {
            if (WorkRequestTokens.wrKind(wc.wrId()) == WorkRequestTokens.WR_RECV) {
                pool.repost(WorkRequestTokens.wrSlot(wc.wrId()));
            }
        };
    }

    /** Hands {@code hint} to this share's budget account ({@link SrqCreditBudget.Account#onRoom}). */
    public void onRoom(Runnable hint) {
        account.onRoom(hint);
    }

    /** A DATA buffer the budget lent came back (the message released, or its fragment copied out). */
    public void released() {
        if (closed) {
            return;
        }
        pool.budget().release(account, 1);
    }

    /** Buffers this channel holds in the budget: credits outstanding plus messages not released. */
    public int budgetHeld() {
        return account.held();
    }

    /**
     * The channel is gone (its QP destroyed and its completion queue drained): every adopted buffer goes
     * back to the SRQ and the budget account closes. Idempotent.
     */
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < global.length; i++) {
            if (global[i] >= 0) {
                pool.repost(global[i]);
                global[i] = -1;
            }
        }
        pool.budget().close(account);
    }
}
