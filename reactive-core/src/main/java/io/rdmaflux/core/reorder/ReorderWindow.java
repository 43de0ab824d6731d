package io.rdmaflux.core.reorder;

import org.jspecify.annotations.Nullable;

import java.util.function.Consumer;

/**
 * The receiver's ESN and bounded out-of-order queue of seed 000 &sect;5.2 (and seed 001 &sect;4.5):
 * every message carries a PSN; the message whose PSN equals the ESN is delivered at once and the
 * ESN advances over any queued successors; a message ahead of the ESN waits in the queue. The queue
 * is a ring of slots indexed by PSN, so enqueue, dequeue and search are O(1) (the paper asks for
 * these three operations to be cheap). The ring starts at {@value #INITIAL_SLOTS} slots and doubles
 * when a PSN arrives farther ahead than it holds, up to {@code windowSize} rounded up to a power of
 * two: a connection whose traffic arrives in order (most of them) keeps a small ring whatever the
 * window it allows (issue 15's memory per peer).
 *
 * <p>PSNs are 32-bit and wrap: distances are computed as {@code psn - esn} in int arithmetic.
 *
 * <p><b>Errors:</b> {@link #offer} throws {@link ReorderWindowOverflowException} for a PSN at or
 * beyond {@code esn + windowSize}, below the ESN, or already queued; the window is unchanged then.
 *
 * <p><b>Concurrency:</b> not thread-safe.
 *
 * @param <T> the item type
 */
public final class ReorderWindow<T> {
    /** Slots of a new window's ring (fewer if the window is smaller). */
    static final int INITIAL_SLOTS = 64;

    private final int windowSize;
    /** Slots of the largest ring: {@code windowSize} rounded up to a power of two. */
    private final int maxSlots;
    private Object[] slots;
    private int mask;
    private int esn;
    private int queued;
    private int highestQueuedDistance = -1;

    /**
     * @param firstPsn   the PSN expected first
     * @param windowSize how far ahead of the ESN a PSN may be, in [1, 2^24]
     */
    public ReorderWindow(int firstPsn, int windowSize) {
        if (windowSize < 1 || windowSize > (1 << 24)) {
            throw new IllegalArgumentException("windowSize in [1, 16777216] required but it was " + windowSize);
        }
        this.windowSize = windowSize;
        int cap = Integer.highestOneBit(windowSize);
        if (cap < windowSize) {
            cap <<= 1;
        }
        this.maxSlots = cap;
        this.slots = new Object[Math.min(cap, INITIAL_SLOTS)];
        this.mask = slots.length - 1;
        this.esn = firstPsn;
    }

    /**
     * Offers an item; delivers it and every queued successor now in order to {@code deliver}.
     *
     * @return how many items were delivered
     * @throws ReorderWindowOverflowException as described in the class comment
     */
    public int offer(int psn, T item, Consumer<? super T> deliver) {
        int distance = psn - esn;
        if (distance < 0) {
            throw new ReorderWindowOverflowException("PSN " + psn + " is older than the ESN " + esn + ": a duplicate or a PSN from another channel");
        }
        if (distance >= windowSize) {
            throw new ReorderWindowOverflowException("PSN " + psn + " is " + distance + " ahead of the ESN " + esn
                + " but the reorder window holds " + windowSize + "; raise the window size or use a scheduling policy that reorders less");
        }
        if (distance > 0) {
            if (distance > mask) {
                grow(distance);
            }
            int idx = psn & mask;
            if (slots[idx] != null) {
                throw new ReorderWindowOverflowException("PSN " + psn + " arrived twice (ESN " + esn + ")");
            }
            slots[idx] = item;
            queued++;
            if (distance > highestQueuedDistance) {
                highestQueuedDistance = distance;
            }
            return 0;
        }
        deliver.accept(item);
        esn++;
        highestQueuedDistance--;
        int delivered = 1;
        for (;;) {
            int idx = esn & mask;
            @SuppressWarnings("unchecked")
            T next = (T) slots[idx];
            if (next == null) {
                break;
            }
            slots[idx] = null;
            queued--;
            deliver.accept(next);
            esn++;
            highestQueuedDistance--;
            delivered++;
        }
        if (queued == 0) {
            highestQueuedDistance = -1;
        }
        return delivered;
    }

    /**
     * Doubles the ring until it holds a PSN {@code distance} ahead of the ESN ({@code distance < windowSize}).
     * Every queued PSN is less than the old ring's length ahead of the ESN, so each old slot maps to one PSN.
     */
    private void grow(int distance) {
        int cap = slots.length;
        while (cap <= distance) {
            cap <<= 1;
        }
        cap = Math.min(cap, maxSlots);
        Object[] old = slots;
        int oldMask = mask;
        Object[] grown = new Object[cap];
        int newMask = cap - 1;
        for (int d = 1; d <= oldMask; d++) {
            int psn = esn + d;
            Object item = old[psn & oldMask];
            if (item != null) {
                grown[psn & newMask] = item;
            }
        }
        slots = grown;
        mask = newMask;
    }

    /** Slots in the ring now (it grows by doubling up to the window rounded up to a power of two; tests). */
    int capacity() {
        return slots.length;
    }

    /**
     * Moves the ESN past {@code n} PSNs the caller delivered itself, in order, from the ESN on.
     *
     * @throws IllegalStateException if items wait out of order (they must go through {@link #offer})
     */
    public void advance(int n) {
        if (queued != 0 || n < 0) {
            throw new IllegalStateException("advance(" + n + ") needs n >= 0 and nothing queued, but " + queued + " items wait");
        }
        esn += n;
    }

    /** The PSN expected next. */
    public int esn() {
        return esn;
    }

    /** Whether {@code psn} is queued out of order (arrived, waiting for an earlier PSN). */
    public boolean isQueued(int psn) {
        int distance = psn - esn;
        return distance > 0 && distance <= mask && slots[psn & mask] != null;
    }

    /** Replaces every item waiting out of order with {@code f}'s result for it (same PSN). */
    public void replaceQueued(java.util.function.UnaryOperator<T> f) {
        for (int i = 0; i < slots.length; i++) {
            @SuppressWarnings("unchecked")
            @Nullable T t = (T) slots[i];
            if (t != null) {
                slots[i] = f.apply(t);
            }
        }
    }

    /** Items waiting out of order. */
    public int queued() {
        return queued;
    }

    /** PSNs from the ESN up to the highest queued one (0 when nothing waits): what must arrive to drain the queue. */
    public int span() {
        return queued == 0 ? 0 : highestQueuedDistance + 1;
    }

    public int windowSize() {
        return windowSize;
    }

    /** Removes every queued item, handing each to {@code discard}. */
    public void clear(Consumer<? super T> discard) {
        for (int i = 0; i < slots.length; i++) {
            @SuppressWarnings("unchecked")
            @Nullable T t = (T) slots[i];
            if (t != null) {
                slots[i] = null;
                discard.accept(t);
            }
        }
        queued = 0;
        highestQueuedDistance = -1;
    }
}
