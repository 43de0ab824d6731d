package io.rdmaflux.striping;

/**
 * Factories of the multiplexing policies of seed 000 §4.4. Each factory creates a fresh policy
 * per virtual channel.
 */
public final class MultiplexingPolicies {
    private MultiplexingPolicies() {
    }

    /**
     * Every message on {@code rail}; falls back to the lowest usable rail if it fails.
     *
     * @throws IllegalArgumentException (at {@code create}) unless {@code 0 <= rail < railCount}
     */
    public static MultiplexingPolicy.Factory binding(int rail) {
        if (rail < 0) {
            throw new IllegalArgumentException("rail >= 0 required but it was " + rail);
        }
        return railCount -> new BindingPolicy(railCount, rail);
    }

    /** One message per rail in turn. */
    public static MultiplexingPolicy.Factory roundRobin() {
        return RoundRobinPolicy::new;
    }

    /**
     * Messages in proportion to {@code weights} (one non-negative weight per rail, not all 0),
     * interleaved smoothly.
     *
     * @throws IllegalArgumentException (at {@code create}) if the weights do not match the rails
     */
    public static MultiplexingPolicy.Factory weightedRoundRobin(int... weights) {
        int[] copy = weights.clone();
        return railCount -> new WeightedRoundRobinPolicy(railCount, copy);
    }

    /**
     * {@code window} consecutive messages per rail, then the next rail.
     *
     * @throws IllegalArgumentException if {@code window < 1}
     */
    public static MultiplexingPolicy.Factory windowRoundRobin(int window) {
        if (window < 1) {
            throw new IllegalArgumentException("window > 0 required but it was " + window);
        }
        return railCount -> new WindowRoundRobinPolicy(railCount, window);
    }
}
