package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.ScatterGatherEntry;
import io.rdmaflux.verbs.VerbsException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Posted receives of a QP or an SRQ: a preallocated ring of parallel arrays. Posting threads
 * serialize on the ring's monitor and publish with a release store; the device's engine consumes
 * without locking.
 */
final class ReceiveRing {
    static final int SGES = ReceiveWorkRequest.MAX_SGE;

    final int capacity;
    private final int mask;
    private final int slotShift;
    private long producerCachedHead;
    private long consumerHead;
    private long consumerCachedTail;
    final long[] wrIds;
    final int[] numSges;
    final long[] sgeAddresses;
    final int[] sgeLengths;
    final int[] sgeLkeys;
    private final AtomicLong tail = new AtomicLong();
    private final AtomicLong head = new AtomicLong();

    private final boolean singlePoster;

    ReceiveRing(int capacity, boolean singlePoster) {
        this.singlePoster = singlePoster;
        this.capacity = capacity;
        int slots = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.mask = slots - 1;
        this.slotShift = Integer.numberOfTrailingZeros(slots);
        this.wrIds = new long[slots];
        this.numSges = new int[slots];
        this.sgeAddresses = new long[slots * SGES];
        this.sgeLengths = new int[slots * SGES];
        this.sgeLkeys = new int[slots * SGES];
    }

    /** Index of SGE {@code k} of {@code slot} in the SGE arrays: SGE-major, as in {@link SendRing#sgeIndex}. */
    int sgeIndex(int slot, int k) {
        return k << slotShift | slot;
    }

    private final java.util.concurrent.atomic.AtomicBoolean postLock = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Any thread (a spin lock held only for the copy into the ring), or without the lock when the
     * provider's thread domain promises one poster at a time. @return false when full
     */
    boolean post(ReceiveWorkRequest wr) {
        if (singlePoster) {
            return postLocked(wr);
        }
        while (!postLock.compareAndSet(false, true)) {
            Thread.onSpinWait();
        }
        try {
            return postLocked(wr);
        } finally {
            postLock.lazySet(false);
        }
    }

    private boolean postLocked(ReceiveWorkRequest wr) {
        long t = tail.get();
        if (t - producerCachedHead >= capacity) {
            producerCachedHead = head.get();
            if (t - producerCachedHead >= capacity) {
                return false;
            }
        }
        int n = wr.numSge();
        int slot = (int) t & mask;
        for (int k = 0; k < n; k++) {
            ScatterGatherEntry s = wr.sge(k);
            if (s.length() < 0) {
                throw new VerbsException("receive SGE " + k + " has negative length " + s.length()
                    + "; lengths are byte counts >= 0");
            }
            int i = sgeIndex(slot, k);
            sgeAddresses[i] = s.address();
            sgeLengths[i] = s.length();
            sgeLkeys[i] = s.lkey();
        }
        wrIds[slot] = wr.wrId();
        numSges[slot] = n;
        tail.lazySet(t + 1);
        return true;
    }

    /** Engine: the slot of the oldest posted receive, or -1 if none. */
    int peek() {
        long h = consumerHead;
        if (h == consumerCachedTail) {
            consumerCachedTail = tail.get();
            if (h == consumerCachedTail) {
                return -1;
            }
        }
        return (int) h & mask;
    }

    /** Engine: consumes the receive {@link #peek()} returned. */
    void consume() {
        head.lazySet(++consumerHead);
    }

    int outstanding() {
        return (int) (tail.get() - head.get());
    }
}
