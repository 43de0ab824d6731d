package io.rdmaflux.core.stripe;

/**
 * The ordered side of the completion filter (seed 000 &sect;4.1): PSNs handed out in sequence, marked
 * complete in any order, released strictly in PSN order. A window of at most {@code capacity} PSNs is
 * in flight; a PSN's slot ({@link #slot}) doubles as its {@link StripeEngine} entry.
 *
 * <p><b>Memory:</b> one boolean per slot, nothing allocated after construction.
 *
 * <p><b>Concurrency:</b> not thread-safe; one thread calls every method.
 */
public final class PsnOrder {
    private final boolean[] done;
    private final int mask;
    private long head;
    private long next;

    /**
     * @param capacity PSNs in flight at most, rounded up to a power of two, {@code >= 1}
     * @throws IllegalArgumentException if {@code capacity < 1}
     */
    public PsnOrder(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity >= 1 required but it was " + capacity);
        }
        int n = Math.max(2, Integer.highestOneBit(Math.max(1, capacity - 1)) << 1);
        done = new boolean[n];
        mask = n - 1;
    }

    /** Slots of the window (the {@link StripeEngine} entries a user needs). */
    public int capacity() {
        return done.length;
    }

    /**
     * The next PSN.
     *
     * @throws IllegalStateException if {@link #capacity()} PSNs are in flight
     */
    public long assign() {
        if (next - head >= done.length) {
            throw new IllegalStateException(done.length + " PSNs in flight already, from " + head);
        }
        done[(int) next & mask] = false;
        return next++;
    }

    /** The slot (engine entry) of {@code psn}. */
    public int slot(long psn) {
        return (int) psn & mask;
    }

    /**
     * {@code psn} completed.
     *
     * @return whether it completed out of order: a PSN before it is still in flight and not complete
     */
    public boolean complete(long psn) {
        done[(int) psn & mask] = true;
        for (long p = head; p < psn; p++) {
            if (!done[(int) p & mask]) {
                return true;
            }
        }
        return false;
    }

    /** Whether the oldest PSN in flight completed (it may be released). */
    public boolean headCompleted() {
        return head < next && done[(int) head & mask];
    }

    /** The oldest PSN in flight (or {@link #nextPsn()} when none is). */
    public long head() {
        return head;
    }

    /** Releases the oldest PSN in flight, complete or not (a complete one in order; any one on a drain). */
    public void release() {
        if (head < next) {
            done[(int) head & mask] = false;
            head++;
        }
    }

    /** PSNs handed out and not released. */
    public int inFlight() {
        return (int) (next - head);
    }

    /** The PSN {@link #assign()} gives next. */
    public long nextPsn() {
        return next;
    }
}
