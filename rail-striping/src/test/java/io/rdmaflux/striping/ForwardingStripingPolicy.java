package io.rdmaflux.striping;

import io.rdmaflux.core.stripe.MessageTimings;
/**
 * A {@link StripingPolicy} that passes every call to another one, for tests that record or change one
 * aspect of a real policy by overriding just that method.
 */
public class ForwardingStripingPolicy implements StripingPolicy {
    protected final StripingPolicy delegate;

    public ForwardingStripingPolicy(StripingPolicy delegate) {
        this.delegate = delegate;
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        delegate.split(lengthBytes, usableRails, nowNs, stripeBytes);
    }

    @Override
    public void onStripePosted(int rail, long lengthBytes, long nowNs) {
        delegate.onStripePosted(rail, lengthBytes, nowNs);
    }

    @Override
    public void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs, boolean railIdleAtPost,
                                  int outstandingOnRail) {
        delegate.onStripeCompleted(rail, lengthBytes, postedNs, completedNs, railIdleAtPost, outstandingOnRail);
    }

    @Override
    public void onMessageCompleted(MessageTimings timings) {
        delegate.onMessageCompleted(timings);
    }

    @Override
    public void onRailRemoved(int rail) {
        delegate.onRailRemoved(rail);
    }

    @Override
    public boolean splitsByRate() {
        return delegate.splitsByRate();
    }

    @Override
    public double share(int rail) {
        return delegate.share(rail);
    }

    @Override
    public int railCount() {
        return delegate.railCount();
    }

    @Override
    public String name() {
        return delegate.name();
    }
}
