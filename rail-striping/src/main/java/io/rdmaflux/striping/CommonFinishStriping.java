package io.rdmaflux.striping;

import io.rdmaflux.core.stripe.MessageTimings;
import io.rdmaflux.core.stripe.StripeEngine;
import io.rdmaflux.core.stripe.StripePolicy;

/**
 * The {@link StripePolicy} a {@link CommunicationScheduler} gives its {@link StripeEngine}: the
 * striping policy's split, topped up to a common finish time given each rail's backlog in the engine
 * ({@link CommonFinishSplit}) when the spec asks for it and the policy splits by measured rates;
 * feedback goes to the striping policy unchanged.
 *
 * <p><b>Concurrency:</b> the engine's thread only.
 */
final class CommonFinishStriping implements StripePolicy {
    private final StripingPolicy striping;
    private final boolean topUp;
    private final long granuleBytes;
    private final double[] rateScratch;
    private long[] backlogBytes = new long[0];

    CommonFinishStriping(StripingPolicy striping, boolean commonFinish, long granuleBytes) {
        this.striping = striping;
        this.topUp = commonFinish && striping.splitsByRate();
        this.granuleBytes = granuleBytes;
        this.rateScratch = new double[striping.railCount()];
    }

    /** Reads the backlogs of {@code engine} (the engine created with this policy calls this). */
    @Override
    public void attach(StripeEngine engine) {
        this.backlogBytes = engine.backlogView();
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        striping.split(lengthBytes, usableRails, nowNs, stripeBytes);
        if (topUp) {
            CommonFinishSplit.topUp(lengthBytes, usableRails, backlogBytes, granuleBytes, stripeBytes, rateScratch);
        }
    }

    @Override
    public void onStripePosted(int rail, long lengthBytes, long nowNs) {
        striping.onStripePosted(rail, lengthBytes, nowNs);
    }

    @Override
    public void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs, boolean railIdleAtPost,
                                  int outstandingOnRail) {
        striping.onStripeCompleted(rail, lengthBytes, postedNs, completedNs, railIdleAtPost, outstandingOnRail);
    }

    @Override
    public void onMessageCompleted(MessageTimings timings) {
        striping.onMessageCompleted(timings);
    }

    @Override
    public void onRailRemoved(int rail) {
        striping.onRailRemoved(rail);
    }

    @Override
    public String name() {
        return striping.name();
    }
}
