package io.rdmaflux.striping;

import java.util.Arrays;

/**
 * Weighted striping with static weights (seed 000 §4.4), e.g. the link bandwidths 4:1 of a 4x and
 * a 1x HCA (§6.3). A failed rail's weight is simply left out of the split.
 */
final class WeightedStriping implements StripingPolicy {
    private final double[] weights;
    private final long granuleBytes;
    /** Rails not removed; read by {@link #share} from any thread. */
    private volatile long usable;

    WeightedStriping(int railCount, long granuleBytes, double[] weights) {
        RailMask.checkRailCount(railCount);
        this.granuleBytes = StripingPolicies.checkGranule(granuleBytes);
        this.weights = StripingPolicies.checkWeights(railCount, weights);
        this.usable = RailMask.all(railCount);
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        Apportion.split(lengthBytes, weights, usableRails, granuleBytes, stripeBytes);
    }

    @Override
    public void onRailRemoved(int rail) {
        usable &= ~(1L << rail);
    }

    /** The rail's weight over the weights of the rails not removed (0 for a removed rail). */
    @Override
    public double share(int rail) {
        long u = usable;
        if (!RailMask.contains(u, rail)) {
            return 0;
        }
        double total = 0;
        for (int i = 0; i < weights.length; i++) {
            if (RailMask.contains(u, i)) {
                total += weights[i];
            }
        }
        return total > 0 ? weights[rail] / total : 0;
    }

    @Override
    public int railCount() {
        return weights.length;
    }

    @Override
    public String name() {
        return "weighted" + Arrays.toString(weights);
    }
}
