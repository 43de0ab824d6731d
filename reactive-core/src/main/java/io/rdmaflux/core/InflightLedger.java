package io.rdmaflux.core;

import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.DataFrameCodec;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

/**
 * Connection stage: what this side sent and has not seen complete, by PSN. Every PSN's length and start
 * time (for the scheduler's completion report, seed 000 &sect;4.5), the small messages themselves (kept
 * until their send completed, so a rail failure can send them again), and the PSNs to send again after a
 * failover, in PSN order.
 *
 * <p>A ring indexed by PSN: PSNs not yet completed span at most the messages the send slots carry plus
 * what the peer's reorder window admits, so the ring never wraps onto a live entry.
 *
 * <p><b>Concurrency:</b> progress thread only, but {@link #messagesResent()}, which any thread may read.
 */
final class InflightLedger {
    private static final java.util.concurrent.atomic.AtomicLongFieldUpdater<InflightLedger> MESSAGES_RESENT =
        java.util.concurrent.atomic.AtomicLongFieldUpdater.newUpdater(InflightLedger.class, "messagesResent");

    private final long[] startNs;
    private final int[] length;
    /** Small messages sent and not yet completed, kept for re-sending after a rail failure; by PSN. */
    private final @Nullable RdmaMessage[] messages;
    private final int[] messagePsn;
    private final int[] messageRail;
    private final int mask;
    private final int[] resendPsns;
    private int resendCount;
    private long packedMessagesTakenBack;
    /** PSNs ever listed for re-sending (failovers only, off the data path). */
    private volatile long messagesResent;

    /** @param capacity PSNs that may be in flight at once (rounded up to a power of two, at least 2) */
    InflightLedger(int capacity) {
        int ring = Integer.highestOneBit(Math.max(2, capacity) * 2);
        this.startNs = new long[ring];
        this.length = new int[ring];
        this.messages = new RdmaMessage[ring];
        this.messagePsn = new int[ring];
        this.messageRail = new int[ring];
        this.resendPsns = new int[ring];
        this.mask = ring - 1;
    }

    /** PSN {@code psn} of {@code lengthBytes} starts now. */
    void start(int psn, int lengthBytes, long nowNs) {
        int idx = psn & mask;
        startNs[idx] = nowNs;
        length[idx] = lengthBytes;
    }

    int length(int psn) {
        return length[psn & mask];
    }

    long elapsedNs(int psn, long nowNs) {
        return nowNs - startNs[psn & mask];
    }

    /** Keeps small message {@code m} of {@code psn}, sent on {@code rail}, until its send completes. */
    void keep(int psn, RdmaMessage m, int rail) {
        int idx = psn & mask;
        messages[idx] = m;
        messagePsn[idx] = psn;
        messageRail[idx] = rail;
    }

    /** Whether the entry of {@code psn} is free for a new kept message (no earlier PSN kept there). */
    boolean isFree(int psn) {
        return messages[psn & mask] == null;
    }

    /** Forgets the message kept for {@code psn} without releasing it (a packed frame holds its bytes now). */
    void forget(int psn) {
        messages[psn & mask] = null;
    }

    /** The message kept for {@code psn}, or null. */
    @Nullable RdmaMessage kept(int psn) {
        int idx = psn & mask;
        RdmaMessage m = messages[idx];
        return m != null && messagePsn[idx] == psn ? m : null;
    }

    /** The message kept for {@code psn} is re-sent on {@code rail}. */
    void movedTo(int psn, int rail) {
        messageRail[psn & mask] = rail;
    }

    /**
     * Drops and releases the message kept for {@code psn} (its send completed). False when there is none:
     * a copy re-sent after a failover completed too, and the message was counted once already.
     */
    boolean retire(int psn) {
        int idx = psn & mask;
        RdmaMessage m = messages[idx];
        if (m == null || messagePsn[idx] != psn) {
            return false;
        }
        messages[idx] = null;
        m.release();
        return true;
    }

    /** Lists every message kept for {@code rail} to be re-sent (the rail failed); {@code nextPsn} orders the list. */
    void resendAllOf(int rail, int nextPsn) {
        for (int idx = 0; idx < messages.length; idx++) {
            if (messages[idx] != null && messageRail[idx] == rail && !resendListed(messagePsn[idx])) {
                addResend(messagePsn[idx], nextPsn);
            }
        }
    }

    /**
     * A frame without a completion on failed rail {@code rail}: if packed, its messages (released when
     * packed) are copied out of the send buffer and kept as in-flight messages of that rail, to be re-sent
     * with their PSNs like any other. Off the data path: only on a rail failure.
     */
    void keepPackedForResend(int rail, long token, DirectBuffer memory, int frameOffset) {
        if (!WorkRequestTokens.isPacked(token)) {
            return;
        }
        int firstPsn = WorkRequestTokens.psn(token);
        int count = WorkRequestTokens.packedCount(token);
        int pos = DataFrameCodec.payloadOffset(frameOffset);
        for (int i = 0; i < count; i++) {
            int len = DataFrameCodec.packedLength(memory, pos);
            byte[] copy = new byte[len];
            memory.getBytes(pos + DataFrameCodec.PACKED_PREFIX_BYTES, copy);
            pos += DataFrameCodec.PACKED_PREFIX_BYTES + len;
            keep(firstPsn + i, RdmaMessage.of(copy), rail);
        }
        packedMessagesTakenBack += count;
    }

    /** Messages listed to be sent again after their rail failed, since the connection opened. */
    long messagesResent() {
        return messagesResent;
    }

    long packedMessagesTakenBack() {
        return packedMessagesTakenBack;
    }

    // ---------------------------------------------------------------- the re-send list

    int resendCount() {
        return resendCount;
    }

    /** The lowest PSN to send again. */
    int nextResend() {
        return resendPsns[0];
    }

    void popResend() {
        System.arraycopy(resendPsns, 1, resendPsns, 0, --resendCount);
    }

    /** Adds {@code psn} to the re-send list, kept in PSN order relative to {@code nextPsn}. */
    void addResend(int psn, int nextPsn) {
        MESSAGES_RESENT.lazySet(this, messagesResent + 1);
        int k = resendCount;
        while (k > 0 && resendPsns[k - 1] - nextPsn > psn - nextPsn) {
            resendPsns[k] = resendPsns[k - 1];
            k--;
        }
        resendPsns[k] = psn;
        resendCount++;
    }

    boolean resendListed(int psn) {
        for (int k = 0; k < resendCount; k++) {
            if (resendPsns[k] == psn) {
                return true;
            }
        }
        return false;
    }

    /** The connection terminated: every kept message is released, nothing is re-sent. */
    void releaseAll() {
        for (int idx = 0; idx < messages.length; idx++) {
            RdmaMessage m = messages[idx];
            if (m != null) {
                messages[idx] = null;
                m.release();
            }
        }
        resendCount = 0;
    }
}
