package io.rdmaflux.core.stripe;

/**
 * What the {@link StripeEngine} asks where a message's bytes go, and tells how they went: the
 * scheduling policy of seed 000 &sect;4.4 with the feedback loop of Fig. 4 (&sect;4.5). rail-striping's
 * striping policies are this interface; the connection's {@code SubchannelScheduler} feeds it through
 * an adapter.
 *
 * <p><b>Errors:</b> a {@link #split} whose entries are negative, give bytes to a rail outside the usable
 * mask, or do not add up to the length makes the engine throw an {@link IllegalStateException} naming
 * {@link #name()} and the split.
 *
 * <p><b>Concurrency:</b> called by the thread that runs its engine only.
 */
public interface StripePolicy {

    /**
     * The {@link StripeEngine} this policy was given to, called once by its constructor as its last
     * step. A policy that splits by the engine's state keeps it and reads it from then on
     * ({@link StripeEngine#backlogView()}, {@link StripeEngine#outstandingOn}, {@link StripeEngine#lastCompletionNs});
     * the default ignores it.
     *
     * @throws IllegalStateException if the policy serves another engine already and cannot serve two
     *                               (the engine's constructor throws it on)
     */
    default void attach(StripeEngine engine) {
    }

    /**
     * Fills {@code stripeBytes[rail]} with the bytes of a {@code lengthBytes} message that go on each
     * rail. Entries of rails outside {@code usableRails} must be 0, the entries must add up to
     * {@code lengthBytes}; stripes are laid out contiguously in rail order (rail 0's bytes first).
     *
     * @param lengthBytes message length (or length of the piece re-planned after a rail failure), bytes, {@code > 0}
     * @param usableRails bit mask of usable rails, never 0
     * @param nowNs       current time of the engine's clock, ns
     * @param stripeBytes output, one entry per rail, zeroed on entry
     */
    void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes);

    /**
     * The engine posted {@code lengthBytes} on {@code rail}: a stripe of a split, a whole message, or
     * a re-sent stripe (seed 004 &sect;II-B: how busy each rail is).
     *
     * @param nowNs engine clock, ns
     */
    default void onStripePosted(int rail, long lengthBytes, long nowNs) {
    }

    /**
     * One stripe (or one whole message) completed on {@code rail}, the rail that carried it.
     *
     * @param lengthBytes       bytes of the stripe
     * @param postedNs          when it was posted, engine clock ns
     * @param completedNs       when its completion was seen, engine clock ns
     * @param railIdleAtPost    whether nothing of the engine was outstanding on {@code rail} when it was
     *                          posted (then {@code completedNs - postedNs} is a clean transfer time)
     * @param outstandingOnRail stripes still outstanding on {@code rail} after this one
     */
    default void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs,
                                   boolean railIdleAtPost, int outstandingOnRail) {
    }

    /**
     * Every stripe of message {@code psn} completed, whether it was {@linkplain StripeEngine#split split}
     * or planned {@linkplain StripeEngine#whole whole}: the completion filter's one completion per
     * message (seed 000 &sect;4.1). Called before {@link #onMessageCompleted}.
     *
     * @param carriedOnRails bit mask of the rails a stripe of it completed on (a message counts once on
     *                       every rail that carried bytes of it)
     */
    default void onMessageCarried(long psn, long carriedOnRails) {
    }

    /**
     * Every stripe of a message the engine {@linkplain StripeEngine#split split} completed (seed 000
     * &sect;4.5: "after delivering times for all stripes of a message are collected, adjustment of
     * weights is calculated"). Not called for whole messages. {@code timings} is valid during the call.
     */
    default void onMessageCompleted(MessageTimings timings) {
    }

    /** {@code rail} failed; it will never be usable again and must get no further stripes. */
    default void onRailRemoved(int rail) {
    }

    /** Short name for errors, metrics and logs, e.g. {@code "adaptive(alpha=0.5)"}. */
    String name();
}
