package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.stripe.StripePolicy;

/**
 * The connection's {@link SubchannelScheduler} as the {@link StripePolicy} of its rendezvous path's
 * {@link io.rdmaflux.core.stripe.StripeEngine}, for a scheduler without a
 * {@link SubchannelScheduler#stripePolicy() policy of its own}: a split is {@link SubchannelScheduler#stripe} of the
 * message whose PSN the {@link RendezvousSender} set with {@link #planning} just before. Per-stripe
 * feedback goes to the scheduler from the sender itself ({@link SubchannelScheduler#onStripeCompleted}
 * wants the PSN and the stripe's offset, which the engine's feedback does not carry), so the feedback
 * methods here stay the defaults.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class SchedulerStripePolicy implements StripePolicy {
    private final SubchannelScheduler scheduler;
    private final Channel[] channels;
    private int psn;

    SchedulerStripePolicy(SubchannelScheduler scheduler, Channel[] channels) {
        this.scheduler = scheduler;
        this.channels = channels;
    }

    /** The next split is of message {@code messagePsn}. */
    SchedulerStripePolicy planning(int messagePsn) {
        this.psn = messagePsn;
        return this;
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        scheduler.stripe(psn, (int) lengthBytes, channels, nowNs, stripeBytes);
    }

    @Override
    public String name() {
        return "scheduler " + scheduler;
    }
}
