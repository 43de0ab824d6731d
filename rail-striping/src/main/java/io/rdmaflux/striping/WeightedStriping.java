package io.rdmaflux.striping;

import java.util.Arrays;

/**
 * Weighted striping with static weights (seed 000 §4.4), e.g. the link bandwidths 4:1 of a 4x and
 * a 1x HCA (§6.3). A failed rail's weight is simply left out of the split.
 */
final class WeightedStriping implements StripingPolicy {
    private final double[] weights;
    private final long granuleBytes;
    private final double total;

    WeightedStriping(int railCount, long granuleBytes, double[] weights) {
        RailMask.checkRailCount(railCount);
        this.granuleBytes = StripingPolicies.checkGranule(granuleBytes);
        this.weights = StripingPolicies.checkWeights(railCount, weights);
        this.total = Arrays.stream(weights).sum();
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        Apportion.split(lengthBytes, weights, usableRails, granuleBytes, stripeBytes);
    }

    @Override
    public double share(int rail) {
        return weights[rail] / total;
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
