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
 * what the peer's reorder window admits, so a ring of that size never wraps onto a live entry. The ring
 * starts at {@link #INITIAL_RING} entries and doubles whenever a new PSN's entry still holds an earlier
 * PSN in flight (its completion not yet {@link #completed reported}, or its message still kept), up to that
 * size: a connection with little in flight, like most of many peers, stays small, and once grown the
 * check is one compare per PSN, with no allocation.
 *
 * <p><b>Concurrency:</b> progress thread only, but {@link #messagesResent()}, which any thread may read.
 */
final class InflightLedger {
    /** Entries a connection starts with: enough for a few messages in flight, 28 B each (plus the re-send list). */
    static final int INITIAL_RING = 8;
    private static final long OPEN = 1L;
    private static final java.util.concurrent.atomic.AtomicLongFieldUpdater<InflightLedger> MESSAGES_RESENT =
        java.util.concurrent.atomic.AtomicLongFieldUpdater.newUpdater(InflightLedger.class, "messagesResent");

    // the ring, by PSN & mask: grown by doubling (see grow) from a few entries up to maxRing
    /**
     * Two longs per entry, so a PSN's start touches one cache line: {@code [2i]} its start time, ns;
     * {@code [2i + 1]} the PSN (high 32 bits), the length in bytes (bits 1..31) and whether the entry is
     * open (bit 0: started, its completion not yet {@link #completed reported}).
     */
    private long[] starts;
    /** Small messages sent and not yet completed, kept for re-sending after a rail failure; by PSN. */
    private @Nullable RdmaMessage[] messages;
    private int[] messagePsn;
    private int[] messageRail;
    private int mask;
    private final int maxMask;
    private int[] resendPsns;
    private int resendCount;
    private long packedMessagesTakenBack;
    /** PSNs ever listed for re-sending (failovers only, off the data path). */
    private volatile long messagesResent;

    /**
     * @param capacity PSNs that may be in flight at once (the ring grows up to it, rounded up to a power of
     *                 two, at least 2)
     */
    InflightLedger(int capacity) {
        this(capacity, INITIAL_RING);
    }

    /** @param initialRing entries to start with (a power of two; capped by the largest ring) */
    InflightLedger(int capacity, int initialRing) {
        if (Integer.bitCount(initialRing) != 1) {
            throw new IllegalArgumentException("initialRing must be a power of two but it was " + initialRing);
        }
        int maxRing = Integer.highestOneBit(Math.max(2, capacity) * 2);
        this.maxMask = maxRing - 1;
        allocate(Math.min(initialRing, maxRing));
        this.resendPsns = new int[mask + 1];
    }

    private void allocate(int ring) {
        this.starts = new long[ring * 2];
        this.messages = new RdmaMessage[ring];
        this.messagePsn = new int[ring];
        this.messageRail = new int[ring];
        this.mask = ring - 1;
    }

    /** Entries in the ring now (grows by doubling as more PSNs are in flight at once; tests). */
    int ringSize() {
        return mask + 1;
    }

    /**
     * Doubles the ring: every open start entry and kept message moves to its PSN's entry in the larger
     * ring. Entries of distinct PSNs in the smaller ring are distinct there too, so nothing collides.
     * Runs only while more PSNs are in flight at once than ever before (off the steady state).
     */
    private void grow() {
        long[] oldStarts = starts;
        RdmaMessage[] oldMessages = messages;
        int[] oldMessagePsn = messagePsn;
        int[] oldMessageRail = messageRail;
        int oldRing = oldMessages.length;
        allocate(oldRing * 2);
        for (int i = 0; i < oldRing; i++) {
            long meta = oldStarts[2 * i + 1];
            if ((meta & OPEN) != 0) {
                int idx = (int) (meta >>> 32) & mask;
                starts[2 * idx] = oldStarts[2 * i];
                starts[2 * idx + 1] = meta;
            }
            RdmaMessage m = oldMessages[i];
            if (m != null) {
                int idx = oldMessagePsn[i] & mask;
                messages[idx] = m;
                messagePsn[idx] = oldMessagePsn[i];
                messageRail[idx] = oldMessageRail[i];
            }
        }
        if (resendPsns.length < messages.length) {
            resendPsns = java.util.Arrays.copyOf(resendPsns, messages.length);
        }
    }

    /** Whether the entry of {@code psn} holds an earlier PSN still in flight, and the ring may still grow. */
    private boolean mustGrow(int idx) {
        return mask != maxMask && ((starts[2 * idx + 1] & OPEN) != 0 || messages[idx] != null);
    }

    /** PSN {@code psn} of {@code lengthBytes} starts now. */
    void start(int psn, int lengthBytes, long nowNs) {
        int idx = psn & mask;
        // one compare once the ring reached its largest size
        while (mustGrow(idx)) {
            grow();
            idx = psn & mask;
        }
        starts[2 * idx] = nowNs;
        starts[2 * idx + 1] = (long) psn << 32 | ((long) lengthBytes & 0x7FFF_FFFFL) << 1 | OPEN;
    }

    /**
     * The completion of {@code psn} was reported (its start time and length read for the last time): its
     * entry may take a later PSN without growing the ring.
     */
    void completed(int psn) {
        int idx = psn & mask;
        long meta = starts[2 * idx + 1];
        if ((int) (meta >>> 32) == psn) {
            starts[2 * idx + 1] = meta & ~OPEN;
        }
    }

    int length(int psn) {
        return (int) ((starts[2 * (psn & mask) + 1] & 0xFFFF_FFFFL) >>> 1);
    }

    long elapsedNs(int psn, long nowNs) {
        return nowNs - starts[2 * (psn & mask)];
    }

    /** Keeps small message {@code m} of {@code psn}, sent on {@code rail}, until its send completes. */
    void keep(int psn, RdmaMessage m, int rail) {
        int idx = psn & mask;
        while (messages[idx] != null && messagePsn[idx] != psn && mask != maxMask) {
            grow();
            idx = psn & mask;
        }
        messages[idx] = m;
        messagePsn[idx] = psn;
        messageRail[idx] = rail;
    }

    /**
     * Whether the entry of {@code psn} is free for a new kept message (no earlier PSN kept there), or will
     * be once {@link #start} grew the ring.
     */
    boolean isFree(int psn) {
        return messages[psn & mask] == null || mask != maxMask;
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
        if (resendCount == resendPsns.length) {
            resendPsns = java.util.Arrays.copyOf(resendPsns, resendCount * 2);
        }
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
