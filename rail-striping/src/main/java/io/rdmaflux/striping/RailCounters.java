package io.rdmaflux.striping;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counters of one virtual channel, written by the scheduler thread with ordered stores and read
 * by {@link #snapshot} from any thread.
 */
final class RailCounters {
    private final int railCount;
    private final AtomicLongArray bytes;
    private final AtomicLongArray stripesCompleted;
    private final AtomicLongArray stripesPosted;
    private final AtomicLongArray failed;
    private final AtomicLong messagesReleased = new AtomicLong();
    private final AtomicLong outOfOrder = new AtomicLong();
    private final AtomicLong resentStripes = new AtomicLong();
    private final WeightHistory history;

    RailCounters(int railCount, int historyCapacity) {
        this.railCount = railCount;
        this.bytes = new AtomicLongArray(railCount);
        this.stripesCompleted = new AtomicLongArray(railCount);
        this.stripesPosted = new AtomicLongArray(railCount);
        this.failed = new AtomicLongArray(railCount);
        this.history = new WeightHistory(railCount, historyCapacity);
    }

    void posted(int rail) {
        stripesPosted.lazySet(rail, stripesPosted.get(rail) + 1);
    }

    void completed(int rail, long lengthBytes) {
        bytes.lazySet(rail, bytes.get(rail) + lengthBytes);
        stripesCompleted.lazySet(rail, stripesCompleted.get(rail) + 1);
    }

    void railFailed(int rail) {
        failed.lazySet(rail, 1);
    }

    void messageReleased() {
        messagesReleased.lazySet(messagesReleased.get() + 1);
    }

    void outOfOrderCompletion() {
        outOfOrder.lazySet(outOfOrder.get() + 1);
    }

    void resent() {
        resentStripes.lazySet(resentStripes.get() + 1);
    }

    void recordWeights(long nowNs, double[] shares) {
        history.record(nowNs, shares);
    }

    StripingMetrics snapshot(String multiplexingName, String stripingName, double[] shares) {
        long[] b = new long[railCount];
        long[] c = new long[railCount];
        long[] p = new long[railCount];
        boolean[] up = new boolean[railCount];
        for (int i = 0; i < railCount; i++) {
            b[i] = bytes.get(i);
            c[i] = stripesCompleted.get(i);
            p[i] = stripesPosted.get(i);
            up[i] = failed.get(i) == 0;
        }
        return new StripingMetrics(multiplexingName, stripingName, b, c, p, up, shares,
            messagesReleased.get(), outOfOrder.get(), resentStripes.get(), history.snapshot());
    }
}
