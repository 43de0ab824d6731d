package io.rdmaflux.striping;

import java.util.ArrayList;
import java.util.List;

/**
 * A bounded ring of (time, per-rail share) samples, recorded on every weight update; the oldest
 * sample is overwritten first. Written by the scheduler thread, copied under its monitor by
 * {@link #snapshot} (both are rare: once per striped message).
 */
final class WeightHistory {
    private final int railCount;
    private final long[] timesNs;
    private final double[] shares;
    private long count;

    WeightHistory(int railCount, int capacity) {
        this.railCount = railCount;
        this.timesNs = new long[capacity];
        this.shares = new double[capacity * railCount];
    }

    synchronized void record(long nowNs, double[] current) {
        int capacity = timesNs.length;
        if (capacity == 0) {
            return;
        }
        int slot = (int) (count % capacity);
        timesNs[slot] = nowNs;
        System.arraycopy(current, 0, shares, slot * railCount, railCount);
        count++;
    }

    synchronized List<StripingMetrics.WeightSample> snapshot() {
        int capacity = timesNs.length;
        long first = Math.max(0, count - capacity);
        List<StripingMetrics.WeightSample> out = new ArrayList<>((int) (count - first));
        for (long i = first; i < count; i++) {
            int slot = (int) (i % capacity);
            double[] s = new double[railCount];
            System.arraycopy(shares, slot * railCount, s, 0, railCount);
            out.add(new StripingMetrics.WeightSample(timesNs[slot], s));
        }
        return out;
    }
}
