package io.rdmaflux.striping.connection;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.stripe.StripePolicy;
import io.rdmaflux.striping.MultiplexingPolicy;
import io.rdmaflux.striping.RailCounters;
import io.rdmaflux.striping.RailMask;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingMetrics;
import io.rdmaflux.striping.StripingPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The communication scheduler of seed 000 &sect;4.1 at reactive-core's granularity, a thin adapter
 * over the connection's stripe engine ({@link io.rdmaflux.core.stripe.StripeEngine}):
 *
 * <ul>
 *   <li>{@link #select} places each message whole on one subchannel (a subchannel reassembles its own
 *       fragments): below the switchover threshold the {@link MultiplexingPolicy} picks among the rails
 *       that can send now (a rail short of credits is skipped); a large message's RTS goes on the rail
 *       whose backlog drains first ({@link #firstIdle}); where the connection does not split large
 *       messages, the striping weights place them ({@link WholeMessageWeights}).</li>
 *   <li>Large messages are split by the engine of reactive-core's rendezvous path, with
 *       {@link #stripePolicy()} ({@link ConnectionStriping}: commit horizon, the striping policy's split,
 *       common-finish top-up, drain rates, per-stripe metrics) as its policy. That engine, which posts
 *       the stripes, keeps every per-stripe count: backlog and stripes outstanding per rail, idle at
 *       post, the carrier, the rails a message used. The SPI hooks {@link #stripe} and
 *       {@link #onStripeCompleted}, for a caller that uses them instead, drive an engine of their own
 *       ({@link ReportedStripes}).</li>
 *   <li>{@link #stripeNow} is the commit-horizon gate ({@link RailsSpec#commitHorizonNs}).</li>
 * </ul>
 *
 * <p><b>Metrics</b> ({@link #metrics()}, read with {@code RailsChannelFactory.metrics(connection)}): per
 * rail the payload bytes of stripes and of whole messages completed, messages (once per rail that
 * carried bytes of them), stripes posted and completed (a whole message counts as one); the weights and
 * their history; messages whose completion came while an earlier PSN was outstanding
 * ({@link CompletionOrder}). Weight samples carry the node clock of the stripe event that updated them:
 * the first is the initial weights at the first stripe event; whole-message feedback and rail failures,
 * which come without a clock, are stamped with the latest node time seen and not recorded before one
 * was seen.
 *
 * <p><b>Errors:</b> none of its own; a striping policy's wrong split is the engine's
 * {@link IllegalStateException}, which the connection turns into an abort.
 *
 * <p><b>Concurrency:</b> progress thread only, as the SPI says; {@link #metrics()} and {@link #share}
 * from any thread.
 */
final class MessageRailScheduler implements SubchannelScheduler {
    private final int railCount;
    private final long switchoverThresholdBytes;
    private final MultiplexingPolicy multiplexing;
    private final StripingPolicy striping;
    private final RailCounters counters;
    private final CompletionOrder order = new CompletionOrder();
    private final ConnectionStriping stripes;
    private final WholeMessageWeights whole;
    private @Nullable ReportedStripes reported;
    private long failed;

    MessageRailScheduler(RailsSpec spec) {
        this.railCount = spec.railCount();
        this.switchoverThresholdBytes = spec.switchoverThresholdBytes();
        this.multiplexing = spec.multiplexing().create(railCount);
        this.striping = spec.striping().create(railCount, 1);
        this.counters = new RailCounters(railCount, spec.weightHistoryCapacity());
        this.stripes = new ConnectionStriping(railCount, striping, spec.commitHorizonNs(), counters, order);
        this.whole = new WholeMessageWeights(railCount, switchoverThresholdBytes, striping);
    }

    /**
     * Hands the rails' advertised rates (bytes/s per rail, from the ports) to the striping policy before
     * the first message, so adaptive striping starts from them ({@link StripingPolicy#advertisedRates}).
     */
    void advertisedRates(long[] railBytesPerSec) {
        striping.advertisedRates(railBytesPerSec);
    }

    @Override
    public int select(int psn, int lengthBytes, Subchannel[] subchannels) {
        order.sent(psn);
        long canSend = 0;
        for (int i = 0; i < railCount; i++) {
            if ((failed & (1L << i)) == 0 && subchannels[i].canSend()) {
                canSend |= 1L << i;
            }
        }
        boolean large = lengthBytes >= switchoverThresholdBytes;
        int rail;
        if (large && !stripes.splitting()) {
            // weights place the whole message; wait (-1) while that rail has no credit
            rail = whole.earliestFinish(lengthBytes, failed);
            if (rail < 0 || !RailMask.contains(canSend, rail)) {
                return -1;
            }
            whole.assigned(rail, lengthBytes);
        } else {
            if (canSend == 0) {
                return -1;
            }
            rail = large ? firstIdle(canSend) : -1;
            if (rail < 0) {
                rail = multiplexing.selectRail(lengthBytes, canSend);
            }
        }
        if (!large) {
            // a large message is counted where it turns out whole (onMessageCompleted) or in stripes (the engine)
            counters.posted(rail);
        }
        whole.placed(rail, lengthBytes);
        return rail;
    }

    /**
     * Where an RTS waits least: the rail in {@code candidates} whose backlog drains first
     * ({@code B_i / w_i}, the weights as relative rates), or -1 when none has a backlog (then the
     * multiplexing policy spreads the RTSs). On an RC rail the RTS queues behind the rail's own stripes
     * (one ordered stream per queue pair; over TCP, behind megabytes in the socket buffer): sent behind
     * the slow rail's backlog it held back a message the fast rail could have carried at once (measured:
     * the 400 Mbit rail idle 350 ms after the even start on 400 + 100 Mbit rails).
     */
    private int firstIdle(long candidates) {
        int best = -1;
        double bestDrain = Double.MAX_VALUE;
        boolean anyBacklog = false;
        for (int i = 0; i < railCount; i++) {
            if (!RailMask.contains(candidates, i)) {
                continue;
            }
            long backlog = stripes.backlogBytes(i);
            anyBacklog |= backlog > 0;
            double drain = backlog / Math.max(striping.share(i), 1e-6);
            if (drain < bestDrain) {
                bestDrain = drain;
                best = i;
            }
        }
        return anyBacklog ? best : -1;
    }

    /**
     * A message completed. One whose WRITEs the engine reported was counted on its rails then; one sent
     * whole as DATA frames counts its bytes, one stripe and one message on {@code subchannel}.
     */
    @Override
    public void onMessageCompleted(Subchannel subchannel, int psn, int lengthBytes, long elapsedNs) {
        int rail = subchannel.rail();
        if (!order.takeCarried(psn)) {
            if (lengthBytes >= switchoverThresholdBytes) {
                counters.posted(rail);
            }
            counters.completed(rail, lengthBytes);
            counters.messageCompleted(1L << rail);
        }
        counters.messageReleased();
        if (order.leave(psn, true)) {
            counters.outOfOrderCompletion();
        }
        if (whole.completed(rail, elapsedNs, failed, stripes.splitting())) {
            stripes.recordWeights();
        }
    }

    /**
     * The receiver discarded rendezvous message {@code psn}: it leaves the completion order and the RTS
     * rail's queue like a completed one, so later completions pair with their own placements and are
     * not taken as out of order, but counts no bytes, no completed message and gives no rate. Stripes of
     * it that completed before were counted as stripes.
     */
    @Override
    public void onMessageDiscarded(Subchannel subchannel, int psn, int lengthBytes) {
        order.leave(psn, false);
        whole.left(subchannel.rail());
    }

    /** Messages of at least this many bytes are striped (the spec's switchover threshold). */
    @Override
    public long stripeThresholdBytes() {
        return switchoverThresholdBytes;
    }

    /** The commit-horizon gate: see {@link ConnectionStriping}. */
    @Override
    public boolean stripeNow(long nowNs) {
        return stripes.stripeNow();
    }

    /** {@link ConnectionStriping}, for the engine of the connection's rendezvous path. */
    @Override
    public StripePolicy stripePolicy() {
        return stripes;
    }

    /** The SPI hook, for a caller that does not take {@link #stripePolicy()}: see {@link ReportedStripes}. */
    @Override
    public void stripe(int psn, int lengthBytes, Subchannel[] subchannels, long nowNs, long[] stripeBytes) {
        reported().stripe(psn, lengthBytes, nowNs, stripeBytes);
    }

    /** The SPI hook, for a caller that does not take {@link #stripePolicy()}: see {@link ReportedStripes}. */
    @Override
    public void onStripeCompleted(Subchannel subchannel, int psn, long offsetBytes, long lengthBytes, long postedNs,
                                  long completedNs) {
        reported().completed(subchannel.rail(), psn, offsetBytes, lengthBytes, postedNs, completedNs);
    }

    private ReportedStripes reported() {
        ReportedStripes r = reported;
        if (r == null) {
            r = new ReportedStripes(railCount, stripes, failed);
            reported = r;
        }
        return r;
    }

    /** Called by reactive-core when a subchannel failed: no more messages or stripes go to it. */
    @Override
    public void onSubchannelFailed(Subchannel subchannel) {
        int rail = subchannel.rail();
        failed |= 1L << rail;
        counters.railFailed(rail);
        stripes.railRemoved(rail);
        ReportedStripes r = reported;
        if (r != null) {
            r.railFailed(rail);
        }
        stripes.recordWeights();
    }

    /** Measured drain rate of {@code rail}'s stripes, bytes/s; 0 before a first measurement. */
    double drainRateBytesPerSec(int rail) {
        return stripes.drainRateBytesPerSec(rail);
    }

    /** Current weight of {@code rail}, for metrics; any thread. */
    double share(int rail) {
        return striping.share(rail);
    }

    /** A snapshot of this connection's per-rail counters, weights and weight history; any thread. */
    StripingMetrics metrics() {
        double[] shares = new double[railCount];
        for (int rail = 0; rail < railCount; rail++) {
            shares[rail] = striping.share(rail);
        }
        return counters.snapshot(multiplexing.name(), striping.name(), shares);
    }

    @Override
    public String toString() {
        return "MessageRailScheduler{" + multiplexing.name() + "/" + striping.name() + ", threshold=" + switchoverThresholdBytes + "}";
    }
}
