package io.rdmaflux.striping;

/**
 * Splits one large message into stripes, at most one per rail (seed 000 §4.4 "striping schemes",
 * §4.5 adaptive striping; seed 004 §II-B sampled split ratio).
 *
 * <p>The {@link CommunicationScheduler} calls {@link #split} for every message at or above its
 * switchover threshold and feeds every stripe completion and every completed message back
 * (the feedback loop of seed 000 Fig. 4). Static policies ignore the feedback.
 *
 * <p><b>Concurrency:</b> an instance belongs to one virtual channel and is called from the
 * thread that runs that channel's scheduler; it is not thread-safe. {@link #share} may be read
 * by a metrics thread and returns a possibly stale but consistent-per-rail value.
 */
public interface StripingPolicy {

    /**
     * Fills {@code stripeBytes[rail]} with the number of bytes of a {@code lengthBytes} message
     * that go to each rail. Entries of rails outside {@code usableRails} must be 0 and the entries
     * must add up to {@code lengthBytes}.
     *
     * @param lengthBytes message length, {@code > 0}
     * @param usableRails bit mask of usable rails, never 0
     * @param nowNs       current time of the scheduler's clock, in ns
     * @param stripeBytes output, length {@link #railCount()}
     */
    void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes);

    /**
     * The scheduler posted {@code lengthBytes} on {@code rail}: a stripe of this policy's split, a
     * whole multiplexed message, or a re-sent stripe. Lets a policy know how busy each rail is
     * (seed 004 §II-B: the time until a rail becomes idle).
     */
    default void onStripePosted(int rail, long lengthBytes, long nowNs) {
    }

    /**
     * One stripe (or one multiplexed message) completed on {@code rail}.
     *
     * @param lengthBytes       bytes of the stripe
     * @param postedNs          when the scheduler handed it to the subchannel
     * @param completedNs       when its completion was seen
     * @param railIdleAtPost    whether the rail had nothing outstanding when the stripe was posted
     *                          (then {@code completedNs - postedNs} is a clean transfer time)
     * @param outstandingOnRail stripes still outstanding on {@code rail} after this one
     */
    default void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs,
                                   boolean railIdleAtPost, int outstandingOnRail) {
    }

    /**
     * Every stripe of a striped message completed (seed 000 §4.5: "after delivering times for all
     * stripes of a message are collected, adjustment of weights is calculated").
     */
    default void onMessageCompleted(MessageTimings timings) {
    }

    /** {@code rail} failed; it will never be usable again and must get no further stripes. */
    default void onRailRemoved(int rail) {
    }

    /**
     * Whether {@link #split} is in proportion to each rail's measured rate (adaptive striping: at the
     * fixed point of seed 000 eq. 3, {@code W_i ∝ BW_i}). A scheduler that knows how many bytes are
     * still outstanding on each rail may then top each rail up to a common finish time instead of
     * adding the split on top of unequal backlogs (seed 004 §II-B, "time until idle"). False (the
     * default) for static policies, whose split is the user's, and for policies that account for
     * backlogs themselves.
     */
    default boolean splitsByRate() {
        return false;
    }

    /** Current fraction of a message's bytes that goes to {@code rail}, in [0, 1]. */
    double share(int rail);

    /** Number of rails this policy was created for. */
    int railCount();

    /** Short name for metrics and logs, e.g. {@code "adaptive(alpha=0.5)"}. */
    String name();

    /** Creates one policy instance per virtual channel. */
    @FunctionalInterface
    interface Factory {
        /**
         * @param railCount         rails of the virtual channel, 1..64
         * @param stripeGranuleBytes stripes are multiples of this many bytes (the last byte of the
         *                          message excepted), {@code >= 1}
         * @throws IllegalArgumentException if the policy's parameters do not fit {@code railCount}
         */
        StripingPolicy create(int railCount, long stripeGranuleBytes);
    }
}
