package io.rdmaflux.striping;

import java.util.function.LongConsumer;

/**
 * Receive side of a virtual channel: stripes land in place (RDMA WRITE puts them straight into
 * the destination buffer, seed 000 §4.3, so nothing is copied here); this class only tracks which
 * bytes of which PSN arrived and releases whole messages in PSN order (seed 000 §5.2: PSN per
 * virtual channel, ESN at the receiver, an out-of-order queue).
 *
 * <p>Each stripe's arrival notice is the per-subchannel finish message of seed 000 §5.3 (one per
 * subchannel used): a message is complete once the notices of all its subchannels cover its
 * length. Overlapping or repeated stripes (a stripe re-sent after a rail failure whose first copy
 * did arrive) count once; a stripe of a PSN already delivered is a duplicate and is dropped.
 *
 * <p><b>Concurrency:</b> not thread-safe; one receive progress thread.
 */
public final class ReceiveSequencer {
    /** {@link #onStripe} result: accepted. */
    public static final int ACCEPTED = 0;
    /** {@link #onStripe} result: the PSN was already delivered or its bytes already complete; dropped. */
    public static final int DUPLICATE = 1;
    /** {@link #onStripe} result: the PSN is {@code window} or more ahead of the ESN; dropped. */
    public static final int WINDOW_OVERFLOW = 2;

    private final int window;
    private final int mask;
    private final long[] slotPsn;
    private final long[] slotLength;
    private final long[] slotCovered;
    private final boolean[] slotComplete;
    private final long[][] intervals;
    private final int[] intervalCount;
    private long esn;
    private long outOfOrder;
    private long duplicates;

    /**
     * @param windowMessages largest distance between the ESN and an accepted PSN, a power of two
     *                       is not required
     * @throws IllegalArgumentException unless in [1, 2^20]
     */
    public ReceiveSequencer(int windowMessages) {
        if (windowMessages < 1 || windowMessages > (1 << 20)) {
            throw new IllegalArgumentException("windowMessages in [1, 1048576] required but it was " + windowMessages);
        }
        this.window = windowMessages;
        int capacity = Integer.highestOneBit(Math.max(1, windowMessages - 1)) << 1;
        capacity = Math.max(2, capacity);
        this.mask = capacity - 1;
        this.slotPsn = new long[capacity];
        java.util.Arrays.fill(slotPsn, -1);
        this.slotLength = new long[capacity];
        this.slotCovered = new long[capacity];
        this.slotComplete = new boolean[capacity];
        this.intervals = new long[capacity][8];
        this.intervalCount = new int[capacity];
    }

    /**
     * A stripe of message {@code psn} ({@code [offset, offset+length)} of {@code messageLength}
     * bytes) arrived.
     *
     * @return {@link #ACCEPTED}, {@link #DUPLICATE} or {@link #WINDOW_OVERFLOW}
     * @throws IllegalArgumentException if the range lies outside the message
     */
    public int onStripe(long psn, long offsetBytes, long lengthBytes, long messageLengthBytes) {
        if (offsetBytes < 0 || lengthBytes < 0 || offsetBytes + lengthBytes > messageLengthBytes) {
            throw new IllegalArgumentException("stripe [" + offsetBytes + ", " + (offsetBytes + lengthBytes)
                + ") lies outside message " + psn + " of " + messageLengthBytes + " bytes");
        }
        if (psn < esn) {
            duplicates++;
            return DUPLICATE;
        }
        if (psn - esn >= window) {
            return WINDOW_OVERFLOW;
        }
        int slot = (int) psn & mask;
        if (slotPsn[slot] != psn) {
            slotPsn[slot] = psn;
            slotLength[slot] = messageLengthBytes;
            slotCovered[slot] = 0;
            slotComplete[slot] = false;
            intervalCount[slot] = 0;
        } else if (slotComplete[slot]) {
            duplicates++;
            return DUPLICATE;
        }
        slotCovered[slot] += cover(slot, offsetBytes, offsetBytes + lengthBytes);
        if (slotCovered[slot] >= messageLengthBytes) {
            slotComplete[slot] = true;
            if (psn != esn) {
                outOfOrder++;
            }
        }
        return ACCEPTED;
    }

    /** Adds {@code [from, to)} to the slot's interval set; returns the bytes newly covered. */
    private long cover(int slot, long from, long to) {
        if (to <= from) {
            return 0;
        }
        long[] iv = intervals[slot];
        int n = intervalCount[slot];
        long before = 0;
        for (int i = 0; i < n; i++) {
            before += iv[2 * i + 1] - iv[2 * i];
        }
        // merge [from, to) with every interval it touches, keep the rest
        long lo = from;
        long hi = to;
        int kept = 0;
        for (int i = 0; i < n; i++) {
            long a = iv[2 * i];
            long b = iv[2 * i + 1];
            if (b < lo || a > hi) {
                iv[2 * kept] = a;
                iv[2 * kept + 1] = b;
                kept++;
            } else {
                lo = Math.min(lo, a);
                hi = Math.max(hi, b);
            }
        }
        if (2 * kept + 2 > iv.length) {
            iv = java.util.Arrays.copyOf(iv, iv.length * 2);
            intervals[slot] = iv;
        }
        iv[2 * kept] = lo;
        iv[2 * kept + 1] = hi;
        intervalCount[slot] = kept + 1;
        long after = 0;
        for (int i = 0; i <= kept; i++) {
            after += iv[2 * i + 1] - iv[2 * i];
        }
        return after - before;
    }

    /**
     * Delivers, in PSN order, every complete message at the ESN.
     *
     * @return number delivered
     */
    public int poll(LongConsumer deliver) {
        int n = 0;
        while (true) {
            int slot = (int) esn & mask;
            if (slotPsn[slot] != esn || !slotComplete[slot]) {
                return n;
            }
            long psn = esn++;
            slotPsn[slot] = -1;
            n++;
            deliver.accept(psn);
        }
    }

    /** Expected sequence number: the next PSN to deliver. */
    public long esn() {
        return esn;
    }

    /** Messages that became complete while an earlier PSN was still missing. */
    public long outOfOrderArrivals() {
        return outOfOrder;
    }

    /** Stripes dropped as duplicates. */
    public long duplicates() {
        return duplicates;
    }
}
