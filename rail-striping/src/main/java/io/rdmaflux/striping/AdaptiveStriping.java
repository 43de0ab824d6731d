package io.rdmaflux.striping;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Adaptive striping, seed 000 §4.5 (Liu, Vishnu, Panda, SC'04): weighted striping whose weights
 * follow the measured path bandwidth of each subchannel.
 *
 * <p>With total weight {@code W_total}, weight {@code W_i}, message size {@code S} and stripe
 * delivery time {@code t_i} (completion minus post, recorded by the completion filter):
 * <pre>
 *   (1)  BW_i = (S * W_i / W_total) / t_i
 *   (2)  BW_i ∝ W_i / t_i
 *   (3)  W'_i = W_total * (W_i / t_i) / Σ_k (W_k / t_k)
 *   (4)  W'_i = (1 - α) * W_i + α * W_total * (W_i / t_i) / Σ_k (W_k / t_k)
 * </pre>
 * This class applies eq. 4 once per completed message, after every stripe of it completed.
 *
 * <p>Deviations, and why:
 * <ul>
 *   <li>The {@code W_i / t_i} term uses the bytes the rail actually carried for that message
 *       ({@code S_i = S * W_i / W_total} by eq. 1), not the current weight: with several messages
 *       in flight the weights may have moved between the split and the feedback, and granule
 *       rounding makes {@code S_i} the exact figure. With one message in flight both are equal.</li>
 *   <li>The update is restricted to the rails the message used, with {@code W_total} their summed
 *       weight, so the total over all rails stays fixed (the paper's premise) even when a message
 *       skipped a rail.</li>
 *   <li>No weight falls below {@code minShare}: a rail with weight 0 would never get a stripe again,
 *       hence no feedback, and could not recover after a transient slowdown (seed 000 Fig. 20).</li>
 *   <li>Messages re-sent after a rail failure are skipped: their times describe the failure. So
 *       are messages with a stripe whose completion was found in the same poll as the previous one
 *       on its rail while queued behind it: no time can be attributed to it, and clamping it to a
 *       tiny value would make that rail look arbitrarily fast.</li>
 * </ul>
 * The fixed point of eq. 3 is {@code t_i} equal on all rails, i.e. stripes finishing together,
 * which is the balance §4.5 aims at. If all completions are found at the same time (the delayed
 * progress engine of §4.5, case 3) {@code t_i} are equal and the weights do not change.
 */
final class AdaptiveStriping implements StripingPolicy {
    private final int railCount;
    private final long granuleBytes;
    private final double alpha;
    private final double minShare;
    /** Weights as fractions: W_total = 1. */
    private final double[] weights;
    private final double[] ratio;
    private final AtomicLongArray published;
    private long usable;

    AdaptiveStriping(int railCount, long granuleBytes, double alpha, double minShare, double[] initialWeights) {
        this.railCount = RailMask.checkRailCount(railCount);
        this.granuleBytes = StripingPolicies.checkGranule(granuleBytes);
        if (!(alpha > 0 && alpha <= 1)) {
            throw new IllegalArgumentException("alpha in (0, 1] required but it was " + alpha
                + "; seed 000 eq. 4 keeps (1 - alpha) of the previous weight");
        }
        if (!(minShare >= 0 && minShare * railCount < 1)) {
            throw new IllegalArgumentException("minShare in [0, 1/railCount) required but it was " + minShare
                + " for " + railCount + " rails");
        }
        this.alpha = alpha;
        this.minShare = minShare;
        double[] w = StripingPolicies.checkWeights(railCount, initialWeights);
        double sum = 0;
        for (double x : w) {
            sum += x;
        }
        this.weights = new double[railCount];
        for (int i = 0; i < railCount; i++) {
            weights[i] = w[i] / sum;
        }
        this.ratio = new double[railCount];
        this.published = new AtomicLongArray(railCount);
        this.usable = RailMask.all(railCount);
        applyFloor();
        publish();
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        Apportion.split(lengthBytes, weights, usableRails, granuleBytes, stripeBytes);
    }

    @Override
    public void onMessageCompleted(MessageTimings timings) {
        long used = timings.railsUsed() & usable;
        if (timings.resent() || timings.censored() || RailMask.count(used) < 2) {
            return;
        }
        double weightOfUsed = 0;
        double ratioSum = 0;
        for (int rail = 0; rail < railCount; rail++) {
            ratio[rail] = 0;
            if (RailMask.contains(used, rail)) {
                weightOfUsed += weights[rail];
                // eq. 2: W_i / t_i ∝ BW_i, with W_i the bytes this rail carried (eq. 1)
                ratio[rail] = (double) timings.stripeBytes(rail) / Math.max(1L, timings.deliveryTimeNs(rail));
                ratioSum += ratio[rail];
            }
        }
        if (ratioSum <= 0) {
            return;
        }
        for (int rail = 0; rail < railCount; rail++) {
            if (RailMask.contains(used, rail)) {
                // eq. 4
                weights[rail] = (1 - alpha) * weights[rail] + alpha * weightOfUsed * ratio[rail] / ratioSum;
            }
        }
        applyFloor();
        publish();
    }

    @Override
    public void onRailRemoved(int rail) {
        usable &= ~(1L << rail);
        double freed = weights[rail];
        weights[rail] = 0;
        double rest = 0;
        for (int i = 0; i < railCount; i++) {
            rest += weights[i];
        }
        // keep W_total fixed: the survivors share the failed rail's weight in proportion
        for (int i = 0; i < railCount; i++) {
            if (RailMask.contains(usable, i)) {
                weights[i] = rest > 0 ? weights[i] + freed * weights[i] / rest : 1.0 / RailMask.count(usable);
            }
        }
        publish();
    }

    private void applyFloor() {
        if (minShare == 0) {
            return;
        }
        double lifted = 0;
        double above = 0;
        for (int i = 0; i < railCount; i++) {
            if (!RailMask.contains(usable, i)) {
                continue;
            }
            if (weights[i] < minShare) {
                lifted += minShare - weights[i];
                weights[i] = minShare;
            } else {
                above += weights[i] - minShare;
            }
        }
        if (lifted > 0 && above > 0) {
            for (int i = 0; i < railCount; i++) {
                if (RailMask.contains(usable, i) && weights[i] > minShare) {
                    weights[i] -= lifted * (weights[i] - minShare) / above;
                }
            }
        }
    }

    private void publish() {
        for (int i = 0; i < railCount; i++) {
            published.lazySet(i, Double.doubleToRawLongBits(weights[i]));
        }
    }

    @Override
    public double share(int rail) {
        return Double.longBitsToDouble(published.get(rail));
    }

    @Override
    public int railCount() {
        return railCount;
    }

    @Override
    public String name() {
        return "adaptive(alpha=" + alpha + ")";
    }
}
