package io.rdmaflux.samples;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.stripe.StripePolicy;
import org.jspecify.annotations.Nullable;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Wraps a connection's scheduling policy to observe it from outside the progress thread: bytes
 * per rail and credit stalls. Every hook is forwarded to the wrapped scheduler unchanged.
 *
 * <p>A <b>credit stall</b> is an episode in which the connection had a message to place but no
 * rail held a credit (every usable subchannel at {@code sendCredits() == 0}); consecutive
 * {@code select} calls in the same episode count once. Stalls caused by a slow consumer are
 * backpressure working as designed; stalls with a fast consumer mean credits return too late.
 *
 * <p><b>Concurrency:</b> hooks run on the progress thread; the counters are atomics readable from
 * any thread.
 */
final class RailProbe implements ChannelFactory {
    private final ChannelFactory delegate;
    private volatile AtomicLongArray railBytes = new AtomicLongArray(0);
    private final AtomicLong creditStalls = new AtomicLong();

    RailProbe(ChannelFactory delegate) {
        this.delegate = delegate;
    }

    @Override
    public SubchannelScheduler create(java.util.List<? extends Subchannel> subchannels) {
        SubchannelScheduler inner = delegate.create(subchannels);
        AtomicLongArray bytes = new AtomicLongArray(subchannels.size());
        railBytes = bytes;
        return new Probe(inner, bytes);
    }

    /** Payload bytes completed per rail so far. */
    long[] railBytes() {
        AtomicLongArray a = railBytes;
        long[] out = new long[a.length()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i);
        }
        return out;
    }

    long creditStalls() {
        return creditStalls.get();
    }

    @Override
    public String toString() {
        return delegate.toString();
    }

    private final class Probe implements SubchannelScheduler {
        private final SubchannelScheduler inner;
        private final AtomicLongArray bytes;
        private boolean stalled;
        /** The subchannels {@code select} saw last, to publish every rail when a striped message completes. */
        private Subchannel[] seen = new Subchannel[0];

        Probe(SubchannelScheduler inner, AtomicLongArray bytes) {
            this.inner = inner;
            this.bytes = bytes;
        }

        @Override
        public int select(int psn, int lengthBytes, Subchannel[] subchannels) {
            int rail = inner.select(psn, lengthBytes, subchannels);
            boolean noCredit = true;
            for (Subchannel sc : subchannels) {
                if (sc.isUsable() && sc.sendCredits() > 0) {
                    noCredit = false;
                    break;
                }
            }
            if (noCredit && !stalled) {
                creditStalls.incrementAndGet();
            }
            stalled = noCredit;
            seen = subchannels;
            publish(subchannels);
            return rail;
        }

        private void publish(Subchannel[] subchannels) {
            for (int i = 0; i < subchannels.length; i++) {
                bytes.lazySet(i, subchannels[i].bytesSent());
            }
        }

        @Override
        public void onMessageCompleted(Subchannel subchannel, int psn, int lengthBytes, long elapsedNs) {
            inner.onMessageCompleted(subchannel, psn, lengthBytes, elapsedNs);
            bytes.lazySet(subchannel.rail(), subchannel.bytesSent());
            // with a stripe policy of the inner scheduler no stripe hook is called: the other rails' WRITEs
            // are published here
            publish(seen);
        }

        @Override
        public void onMessageDiscarded(Subchannel subchannel, int psn, int lengthBytes) {
            inner.onMessageDiscarded(subchannel, psn, lengthBytes);
        }

        @Override
        public long stripeThresholdBytes() {
            return inner.stripeThresholdBytes();
        }

        @Override
        public boolean stripeNow(long nowNs) {
            return inner.stripeNow(nowNs);
        }

        /** The inner scheduler's own, unwrapped: the engine's feedback goes to it unobserved (bytes are read from the subchannels). */
        @Override
        public @Nullable StripePolicy stripePolicy() {
            return inner.stripePolicy();
        }

        @Override
        public void stripe(int psn, int lengthBytes, Subchannel[] subchannels, long nowNs, long[] stripeBytes) {
            inner.stripe(psn, lengthBytes, subchannels, nowNs, stripeBytes);
            publish(subchannels);
        }

        @Override
        public void onStripeCompleted(Subchannel subchannel, int psn, long offsetBytes, long lengthBytes, long postedNs, long completedNs) {
            inner.onStripeCompleted(subchannel, psn, offsetBytes, lengthBytes, postedNs, completedNs);
            bytes.lazySet(subchannel.rail(), subchannel.bytesSent());
        }

        @Override
        public void onSubchannelFailed(Subchannel subchannel) {
            inner.onSubchannelFailed(subchannel);
        }
    }
}
