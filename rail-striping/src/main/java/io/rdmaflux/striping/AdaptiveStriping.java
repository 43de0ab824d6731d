package io.rdmaflux.striping;

import io.rdmaflux.core.stripe.MessageTimings;
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
 *   <li>Rate window (default {@link StripingPolicies#DEFAULT_RATE_WINDOW}, 20 ms): {@code W_i / t_i}
 *       is the rail's bytes over its delivery times averaged over its recent busy time (each older
 *       sample discounted by {@code exp(-t/τ)} per newer sample of {@code t} ns), not the last
 *       message's. Completion times are poll times: a progress thread held up for a few ms finds a
 *       burst of completions, one stripe per rail carries the whole delay and the others none.
 *       Message by message that swung the weights of 4:1 rails between 0.5 and 0.9 in real time on
 *       a busy 2-core machine; over the busy time the burst counts as what it is (bytes over the
 *       time they took). With the window, a censored message's bytes join the window too.
 *       {@link java.time.Duration#ZERO} gives eq. 4 exactly as printed.</li>
 *   <li>Messages re-sent after a rail failure are skipped: their times describe the failure. With
 *       no rate window, so are messages with a stripe whose completion was found in the same poll
 *       as the previous one on its rail while queued behind it: no time can be attributed to it,
 *       and clamping it to a tiny value would make that rail look arbitrarily fast.</li>
 * </ul>
 * The fixed point of eq. 3 is {@code t_i} equal on all rails, i.e. stripes finishing together,
 * which is the balance §4.5 aims at. If all completions are found at the same time (the delayed
 * progress engine of §4.5, case 3) {@code t_i} are equal and the weights do not change.
 */
final class AdaptiveStriping implements StripingPolicy {
    /** In a censored message, a rail whose window holds less busy time than this has had only censored stripes. */
    private static final double MIN_TIMED_NS = 1_000;
    private final int railCount;
    private final long granuleBytes;
    private final double alpha;
    private final double minShare;
    /** τ of the per-rail rate average, ns of rail busy time; 0: each message's own t_i (eq. 4 as printed). */
    private final double rateWindowNs;
    /** Per rail: bytes and busy ns of the stripes seen, each older sample discounted by exp(-t/τ) per newer t. */
    private final double[] windowBytes;
    private final double[] windowNs;
    /** Weights as fractions: W_total = 1. */
    private final double[] weights;
    private final double[] ratio;
    private final AtomicLongArray published;
    /** Whether the weights were equal by default (no user weights), so advertised rates may replace them. */
    private final boolean seedFromRates;
    private long usable;

    AdaptiveStriping(int railCount, long granuleBytes, double alpha, double minShare, double[] initialWeights) {
        this(railCount, granuleBytes, alpha, 0, minShare, initialWeights);
    }

    AdaptiveStriping(int railCount, long granuleBytes, double alpha, long rateWindowNs, double minShare, double[] initialWeights) {
        this(railCount, granuleBytes, alpha, rateWindowNs, minShare, initialWeights, false);
    }

    /**
     * @param seedFromRates whether {@link #advertisedRates} replaces {@code initialWeights} (the factories
     *                      that start from equal weights because the user gave none)
     */
    AdaptiveStriping(int railCount, long granuleBytes, double alpha, long rateWindowNs, double minShare, double[] initialWeights,
                     boolean seedFromRates) {
        this.seedFromRates = seedFromRates;
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
        if (rateWindowNs < 0) {
            throw new IllegalArgumentException("rateWindowNs >= 0 required but it was " + rateWindowNs
                + "; 0 uses each message's own stripe times");
        }
        this.alpha = alpha;
        this.minShare = minShare;
        this.rateWindowNs = rateWindowNs;
        this.windowBytes = new double[railCount];
        this.windowNs = new double[railCount];
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

    /**
     * Starts from the advertised rates when this policy's weights were the default equal ones and every
     * rail advertises a finite rate &gt; 0: {@code W_i = BW_i / Σ BW_k} is the fixed point of eq. 3 for
     * links running at their advertised rates, so eq. 4 starts where it would otherwise converge to
     * (seed 004 §II-B starts its split from a per-rail model for the same reason). A rail that advertises
     * nothing (unshaped) leaves the equal start: there is no rate to seed from.
     */
    @Override
    public void advertisedRates(long[] railBytesPerSec) {
        if (!seedFromRates || railBytesPerSec.length != railCount) {
            return;
        }
        double sum = 0;
        for (long r : railBytesPerSec) {
            if (r <= 0 || r == Long.MAX_VALUE) {
                return;
            }
            sum += r;
        }
        for (int i = 0; i < railCount; i++) {
            weights[i] = railBytesPerSec[i] / sum;
        }
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
        if (timings.resent() || RailMask.count(used) < 2) {
            return;
        }
        if (rateWindowNs == 0 && timings.censored()) {
            return;
        }
        double weightOfUsed = 0;
        double ratioSum = 0;
        boolean timed = true;
        for (int rail = 0; rail < railCount; rail++) {
            ratio[rail] = 0;
            if (RailMask.contains(used, rail)) {
                weightOfUsed += weights[rail];
                long bytes = timings.stripeBytes(rail);
                long ns = Math.max(1L, timings.deliveryTimeNs(rail));
                if (rateWindowNs == 0) {
                    // eq. 2: W_i / t_i ∝ BW_i, with W_i the bytes this rail carried (eq. 1)
                    ratio[rail] = (double) bytes / ns;
                } else {
                    // the same ratio over the rail's recent busy time: a censored stripe adds its bytes
                    // to the time of the stripe whose completion was seen late with it
                    double keep = Math.exp(-ns / rateWindowNs);
                    windowBytes[rail] = keep * windowBytes[rail] + bytes;
                    windowNs[rail] = keep * windowNs[rail] + ns;
                    ratio[rail] = windowBytes[rail] / windowNs[rail];
                    // only censored stripes so far on this rail: bytes without time, no rate yet
                    timed &= !timings.censored() || windowNs[rail] >= MIN_TIMED_NS;
                }
                ratioSum += ratio[rail];
            }
        }
        if (ratioSum <= 0 || !timed) {
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

    /** Its weights estimate each rail's share of the aggregate rate (the fixed point of eq. 3). */
    @Override
    public boolean splitsByRate() {
        return true;
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
        return rateWindowNs == 0 ? "adaptive(alpha=" + alpha + ")"
            : "adaptive(alpha=" + alpha + ", rateWindowNs=" + (long) rateWindowNs + ")";
    }
}
