package io.rdmaflux.striping;

import java.util.Arrays;

/**
 * Weighted round robin (seed 000 §4.4): rail {@code i} carries {@code w_i / sum(w)} of the
 * messages. Uses the smooth interleaving of nginx' upstream balancer (every pick adds each usable
 * rail's weight to its credit and takes the rail with the most credit, which then pays the total)
 * so that a 3:1 weighting sends {@code 0,0,1,0} rather than {@code 0,0,0,1}: bursts on one rail
 * would add the out-of-order arrivals seed 000 §4.4 warns about.
 */
final class WeightedRoundRobinPolicy implements MultiplexingPolicy {
    private final int[] weights;
    private final long[] credit;

    WeightedRoundRobinPolicy(int railCount, int[] weights) {
        RailMask.checkRailCount(railCount);
        if (weights.length != railCount) {
            throw new IllegalArgumentException("one weight per rail required: " + railCount + " rails but "
                + weights.length + " weights " + Arrays.toString(weights));
        }
        for (int w : weights) {
            if (w < 0) {
                throw new IllegalArgumentException("weights >= 0 required but they were " + Arrays.toString(weights));
            }
        }
        if (Arrays.stream(weights).sum() == 0) {
            throw new IllegalArgumentException("at least one weight > 0 required but they were " + Arrays.toString(weights));
        }
        this.weights = weights.clone();
        this.credit = new long[railCount];
    }

    @Override
    public int selectRail(long lengthBytes, long usableRails) {
        long total = 0;
        int best = -1;
        for (int rail = 0; rail < weights.length; rail++) {
            if (!RailMask.contains(usableRails, rail) || weights[rail] == 0) {
                continue;
            }
            credit[rail] += weights[rail];
            total += weights[rail];
            if (best < 0 || credit[rail] > credit[best]) {
                best = rail;
            }
        }
        if (best < 0) {
            // only zero-weight rails remain usable (the weighted ones failed): fall back to plain turns
            return RoundRobinPolicy.nextUsable(0, usableRails, weights.length);
        }
        credit[best] -= total;
        return best;
    }

    @Override
    public int railCount() {
        return weights.length;
    }

    @Override
    public String name() {
        return "weighted-rr" + Arrays.toString(weights);
    }
}
