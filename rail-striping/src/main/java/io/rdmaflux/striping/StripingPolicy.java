package io.rdmaflux.striping;

import io.rdmaflux.core.stripe.StripePolicy;

/**
 * Splits one large message into stripes, at most one per rail (seed 000 §4.4 "striping schemes",
 * §4.5 adaptive striping; seed 004 §II-B sampled split ratio).
 *
 * <p>A {@link StripePolicy} of reactive-core's stripe engine ({@link io.rdmaflux.core.stripe.StripeEngine}),
 * which calls {@link #split} for every message the {@link CommunicationScheduler} (or a connection's
 * rendezvous path) stripes and feeds every stripe completion and every completed message back (the
 * feedback loop of seed 000 Fig. 4). Static policies ignore the feedback. This interface adds what
 * rail-striping's schedulers read: the current shares and whether the split follows measured rates.
 *
 * <p><b>Concurrency:</b> an instance belongs to one virtual channel and is called from the
 * thread that runs that channel's scheduler; it is not thread-safe. {@link #share} may be read
 * by a metrics thread and returns a possibly stale but consistent-per-rail value.
 */
public interface StripingPolicy extends StripePolicy {

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

    /**
     * The rails' advertised link rates, bytes/s per rail in rail order ({@link Long#MAX_VALUE} or 0 where
     * a rail advertises none, e.g. an unshaped soft rail), as a port reports them ({@code ibv_query_port}'s
     * active speed &times; width; the soft provider's rail model). Called by the scheduler once, before the
     * first {@link #split}. A policy that starts from no knowledge of the rails (adaptive striping from
     * equal weights) starts from these instead, so the first messages are not split evenly over unequal
     * rails while the feedback converges; it keeps adapting from there. The default ignores them: static
     * policies split as the user said, and explicit initial weights win.
     *
     * @param railBytesPerSec one rate per rail; the policy does not keep the array
     */
    default void advertisedRates(long[] railBytesPerSec) {
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
