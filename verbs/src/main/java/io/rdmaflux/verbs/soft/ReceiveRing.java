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
    final long[] wrIds;
    final int[] numSges;
    final long[] sgeAddresses;
    final int[] sgeLengths;
    final int[] sgeLkeys;
    private final AtomicLong tail = new AtomicLong();
    private final AtomicLong head = new AtomicLong();

    ReceiveRing(int capacity) {
        this.capacity = capacity;
        this.wrIds = new long[capacity];
        this.numSges = new int[capacity];
        this.sgeAddresses = new long[capacity * SGES];
        this.sgeLengths = new int[capacity * SGES];
        this.sgeLkeys = new int[capacity * SGES];
    }

    /** Any thread. @return false when full */
    synchronized boolean post(ReceiveWorkRequest wr) {
        long t = tail.get();
        if (t - head.get() >= capacity) {
            return false;
        }
        int n = wr.numSge();
        for (int k = 0; k < n; k++) {
            if (wr.sge(k).length() < 0) {
                throw new VerbsException("receive SGE " + k + " has negative length " + wr.sge(k).length()
                    + "; lengths are byte counts >= 0");
            }
        }
        int slot = (int) (t % capacity);
        wrIds[slot] = wr.wrId();
        numSges[slot] = n;
        for (int k = 0; k < n; k++) {
            ScatterGatherEntry s = wr.sge(k);
            sgeAddresses[slot * SGES + k] = s.address();
            sgeLengths[slot * SGES + k] = s.length();
            sgeLkeys[slot * SGES + k] = s.lkey();
        }
        tail.lazySet(t + 1);
        return true;
    }

    /** Engine: the slot of the oldest posted receive, or -1 if none. */
    int peek() {
        long h = head.get();
        return h == tail.get() ? -1 : (int) (h % capacity);
    }

    /** Engine: consumes the receive {@link #peek()} returned. */
    void consume() {
        head.lazySet(head.get() + 1);
    }

    /** Total bytes the receive in {@code slot} can hold. */
    long capacityBytes(int slot) {
        long total = 0;
        for (int k = 0; k < numSges[slot]; k++) {
            total += sgeLengths[slot * SGES + k];
        }
        return total;
    }

    int outstanding() {
        return (int) (tail.get() - head.get());
    }
}
