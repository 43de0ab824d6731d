package io.rdmaflux.striping;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Sampled striping, seed 004 §II-B and §III-C (Brunet et al., NewMadeleine multirail strategy):
 * each rail has a {@link TransferTimeModel} sampled at powers of two; a message is split so that
 * every chunk is predicted to finish at the same time, counting for each rail the time until it
 * becomes idle; a rail that would finish later than the others can finish the whole message
 * without it gets no chunk (seed 004 Fig. 2).
 *
 * <p>The paper finds the split ratio of two networks by dichotomy on the ratio. For N rails this
 * class bisects on the common finish time {@code T}: rail {@code i} can carry
 * {@code model_i^-1(T - idle_i)} bytes by {@code T}; the smallest {@code T} at which the rails
 * together carry the message is the split where all chunks end together. For two rails it is
 * the same split. A rail with {@code idle_i + model_i(granule) > T} carries nothing: that is the
 * dropping rule.
 *
 * <p>The models follow the rails at run time: a stripe posted to an idle rail gives a clean
 * transfer time that is folded into that rail's model ({@link TransferTimeModel#observe}); a stripe
 * that queued behind others measures the backlog, not the rail, and is not folded in (the scheduler
 * says which, {@code railIdleAtPost}). Time until idle is the policy's own prediction
 * ({@code busyUntil}: when the last work request posted on the rail completes) over everything the
 * scheduler reports posted on the rail, reset to the completion time whenever a rail's last
 * outstanding stripe completes.
 *
 * <p><b>Pipelining</b> (a deviation from seed 004, which adds the whole predicted time of each
 * queued transfer): an RC queue pair puts a posted WRITE on the wire as soon as the one ahead of it
 * is serialized, so the fixed part of a transfer time (the round trip to the completion, the model's
 * prediction for its smallest size, {@code L}) overlaps with the next transfer. A new transfer of
 * {@code s} bytes on a rail whose last one completes at {@code busyUntil} completes at
 * {@code max(now, busyUntil - L) + model(s)}, so the time until idle used here is
 * {@code max(0, busyUntil - L - now)}. Adding {@code L} per queued stripe instead over-counted a
 * backlogged rail by one round trip per stripe, a drift only corrected when the rail drained: in
 * virtual time with 16 messages of 1 MiB in flight on three rails of 3-40 µs latency, the stripes of
 * one message then finished up to 94 % of the message time apart (SampledConnectionStripingTest).
 */
final class SampledStriping implements StripingPolicy {
    private static final int BISECTION_STEPS = 64;

    private final int railCount;
    private final long granuleBytes;
    private final TransferTimeModel[] models;
    private final double gain;
    private final long[] busyUntilNs;
    private final double[] idleNs;
    private final AtomicLongArray lastShare;

    SampledStriping(int railCount, long granuleBytes, TransferTimeModel[] models, double gain) {
        this.railCount = RailMask.checkRailCount(railCount);
        this.granuleBytes = StripingPolicies.checkGranule(granuleBytes);
        if (models.length != railCount) {
            throw new IllegalArgumentException("one transfer-time model per rail required: " + railCount + " rails but "
                + models.length + " models");
        }
        if (!(gain >= 0 && gain <= 1)) {
            throw new IllegalArgumentException("gain in [0, 1] required but it was " + gain);
        }
        this.models = new TransferTimeModel[railCount];
        for (int i = 0; i < railCount; i++) {
            this.models[i] = models[i].copy();
        }
        this.gain = gain;
        this.busyUntilNs = new long[railCount];
        this.idleNs = new double[railCount];
        this.lastShare = new AtomicLongArray(railCount);
        for (int i = 0; i < railCount; i++) {
            lastShare.lazySet(i, Double.doubleToRawLongBits(1.0 / railCount));
        }
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        double hi = Double.MAX_VALUE;
        for (int rail = 0; rail < railCount; rail++) {
            stripeBytes[rail] = 0;
            if (RailMask.contains(usableRails, rail)) {
                idleNs[rail] = Math.max(0, busyUntilNs[rail] - fixedNs(rail) - nowNs);
                hi = Math.min(hi, idleNs[rail] + models[rail].predictNs(lengthBytes));
            }
        }
        double lo = 0;
        for (int step = 0; step < BISECTION_STEPS && hi - lo > 0.5; step++) {
            double mid = (lo + hi) / 2;
            if (carried(mid, usableRails, lengthBytes) >= lengthBytes) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        // whole granules each rail can carry by the lower bound, then the few granules left over go
        // one by one to whichever rail would finish them earliest
        long assigned = 0;
        for (int rail = 0; rail < railCount; rail++) {
            if (RailMask.contains(usableRails, rail)) {
                long bytes = Math.min(lengthBytes, bytesBy(rail, lo));
                stripeBytes[rail] = bytes / granuleBytes * granuleBytes;
                assigned += stripeBytes[rail];
            }
        }
        if (assigned > lengthBytes) {
            trimExcess(stripeBytes, assigned - lengthBytes);
            assigned = lengthBytes;
        }
        while (assigned < lengthBytes) {
            long chunk = Math.min(granuleBytes, lengthBytes - assigned);
            int pick = -1;
            double bestFinish = Double.MAX_VALUE;
            for (int rail = 0; rail < railCount; rail++) {
                if (RailMask.contains(usableRails, rail)) {
                    double finish = idleNs[rail] + models[rail].predictNs(stripeBytes[rail] + chunk);
                    if (finish < bestFinish) {
                        bestFinish = finish;
                        pick = rail;
                    }
                }
            }
            stripeBytes[pick] += chunk;
            assigned += chunk;
        }
        for (int rail = 0; rail < railCount; rail++) {
            lastShare.lazySet(rail, Double.doubleToRawLongBits((double) stripeBytes[rail] / lengthBytes));
        }
    }

    private long bytesBy(int rail, double finishNs) {
        double budget = finishNs - idleNs[rail];
        return budget <= 0 ? 0 : models[rail].maxBytesWithin(budget);
    }

    private long carried(double finishNs, long usableRails, long cap) {
        long sum = 0;
        for (int rail = 0; rail < railCount; rail++) {
            if (RailMask.contains(usableRails, rail)) {
                sum += Math.min(cap, bytesBy(rail, finishNs));
                if (sum >= cap) {
                    return sum;
                }
            }
        }
        return sum;
    }

    private void trimExcess(long[] stripeBytes, long excess) {
        while (excess > 0) {
            int latest = -1;
            double latestFinish = -1;
            for (int rail = 0; rail < railCount; rail++) {
                if (stripeBytes[rail] > 0) {
                    double finish = idleNs[rail] + models[rail].predictNs(stripeBytes[rail]);
                    if (finish > latestFinish) {
                        latestFinish = finish;
                        latest = rail;
                    }
                }
            }
            long cut = Math.min(excess, stripeBytes[latest]);
            stripeBytes[latest] -= cut;
            excess -= cut;
        }
    }

    @Override
    public void onStripePosted(int rail, long lengthBytes, long nowNs) {
        busyUntilNs[rail] = (long) (Math.max(nowNs, busyUntilNs[rail] - fixedNs(rail)) + models[rail].predictNs(lengthBytes));
    }

    /** The fixed part of the rail's transfer time (round trip), which the next queued transfer overlaps: {@code L}. */
    private double fixedNs(int rail) {
        return models[rail].predictNs(1);
    }

    @Override
    public void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs,
                                  boolean railIdleAtPost, int outstandingOnRail) {
        if (railIdleAtPost && gain > 0) {
            models[rail].observe(lengthBytes, Math.max(1, completedNs - postedNs), gain);
        }
        if (outstandingOnRail == 0) {
            busyUntilNs[rail] = completedNs;
        }
    }

    @Override
    public void onRailRemoved(int rail) {
        lastShare.lazySet(rail, Double.doubleToRawLongBits(0.0));
    }

    /** Predicted transfer time of {@code sizeBytes} on {@code rail}, for tests and metrics. */
    double predictNs(int rail, long sizeBytes) {
        return models[rail].predictNs(sizeBytes);
    }

    @Override
    public double share(int rail) {
        return Double.longBitsToDouble(lastShare.get(rail));
    }

    @Override
    public int railCount() {
        return railCount;
    }

    @Override
    public String name() {
        return "sampled";
    }
}
