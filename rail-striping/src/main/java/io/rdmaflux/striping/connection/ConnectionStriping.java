package io.rdmaflux.striping.connection;

import io.rdmaflux.core.stripe.MessageTimings;
import io.rdmaflux.core.stripe.StripeEngine;
import io.rdmaflux.core.stripe.StripePolicy;
import io.rdmaflux.striping.CommonFinishSplit;
import io.rdmaflux.striping.RailCounters;
import io.rdmaflux.striping.RailMask;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A connection's striping of large messages (seed 000 &sect;4.4&ndash;4.5, seed 004 &sect;II-B) as the
 * {@link StripePolicy} of the {@link StripeEngine} that posts its stripes: reactive-core's rendezvous
 * path takes it from {@link MessageRailScheduler#stripePolicy()}. The engine keeps every per-stripe
 * count (backlog and stripes outstanding per rail, idle at post, the carrier, the rails a message
 * used); this class adds what is the connection scheduler's own: the commit-horizon filter and gate,
 * the common-finish top-up against the engine's backlog, the drain-rate measurement, and metrics with
 * the weight history.
 *
 * <p><b>Split.</b> Commit-horizon filter &rarr; the striping policy's split &rarr; top-up to a common
 * finish time against the engine's backlog, the last two only for a policy whose split follows measured
 * rates ({@link StripingPolicy#splitsByRate()}, adaptive striping).
 *
 * <p><b>Common finish time</b> (a deviation from seed 000 &sect;4.4, which splits every message by the
 * weights alone): the bytes a message puts on each rail are chosen so that every rail finishes its
 * outstanding stripes plus the new one at the same time, with the weights as the rails' relative rates
 * (seed 004 &sect;II-B adds each rail's time until idle in the same way): {@code s_i = max(0, T·w_i − B_i)},
 * {@code Σ s_i = S}, for {@code B_i} the bytes posted on rail {@code i} and not completed, as the engine
 * counts them. With equal backlogs per unit of weight this is exactly the weighted split. Why: on a real
 * fabric many messages are in flight, and every message split while the weights are still off (the
 * first ones, split evenly before any feedback) or while one rail stalls for a few ms leaves a backlog
 * that the weights alone never drain (rail-striping/README.md, two namespaces). Static policies (even,
 * weighted) keep the user's split.
 *
 * <p><b>Commit horizon</b> (rdmaflux's own extension, not in the seed papers: seed 004 &sect;II-B uses a
 * rail's time until idle to split a message, not to decide when to split it; {@link #stripeNow},
 * {@link RailsSpec#commitHorizonNs}): the connection asks before it splits each granted message, and
 * gets a yes only while some rail not failed would drain its backlog within the horizon at its measured
 * rate. Why: split at once, a whole window of granted messages puts a share of every one on each rail,
 * and a rail that then slows holds every message buffer for its megabytes while the others run dry
 * (0.5&ndash;0.7 s measured over the two-namespace rails). The drain rate is each rail's stripe bytes
 * over their delivery times for stripes that were queued behind another (a stripe posted to an idle rail
 * also waits a round trip), summed over {@value #RATE_WINDOW_NS} ns of busy time so that a burst of
 * completions found at one poll does not swing it. A rail with nothing queued, or no rate yet, opens the
 * gate whatever its share (sampled striping's share is the last split's; a rail it gave nothing may be
 * idle now).
 *
 * <p><b>Feedback</b> goes to the striping policy as the engine reports it. RTSs and small messages that
 * {@link MessageRailScheduler#select} places are not stripes of the engine and do not count as busy
 * time: {@code select} has no clock to post them at and their completions carry no time. Where the
 * scheduler used to keep its own per-stripe copy, the engine's accounting differs in four ways; each is
 * the engine's, because it is the truer one and no measured figure moves (MessageRailSchedulerTest,
 * SampledConnectionStripingTest, CommitHorizonTest and StripedConnectionTest print and assert the same
 * numbers, to the last digit, as with the copy; rail-striping/README.md's figures come from them):
 * <ul>
 *   <li><i>Idle at post</i> is "nothing outstanding on the rail at the post", not "the previous
 *       completion on the rail came at or before the post". With an RC rail completing in post order and
 *       events handled in time order the two agree, except when a completion and a post carry the same
 *       clock reading and the post was handled first: the stripe then did queue, and the simulated rail's
 *       own queue, SampledConnectionStripingTest's truth, says so.</li>
 *   <li><i>Outstanding stripes</i> count on the rail that carries them, not the rail they were split
 *       for: a stripe re-sent after a failover waits in the carrier's queue and ends that rail's busy
 *       time. The two agree until a rail fails.</li>
 *   <li>{@code onStripePosted} comes at the post, not at the split: a rail's busy time starts when its
 *       WRITE is posted. The connection posts a message's stripes right after its split unless a rail
 *       has no room, and splits no later message before they are all posted, so every split still sees
 *       every earlier stripe; the SPI hooks, which carry no post, post at the split as before.</li>
 *   <li><i>Whole rendezvous writes</i> (below the stripe threshold) count in the backlog and as
 *       outstanding, where the copy left them out of both while feeding their completions to the policy
 *       without a post: a WRITE of a whole message holds its queue pair like a stripe of its size. No
 *       test or measured run has such writes (their messages are striped).</li>
 * </ul>
 * Metrics count a stripe where it is placed, at its split (a whole write where {@code select} placed
 * it, a re-sent stripe not again), as before.
 *
 * <p><b>Errors:</b> {@link #attach} throws {@link IllegalStateException} for a second engine (one
 * scheduler serves one connection); a wrong split of the striping policy is the engine's
 * {@link IllegalStateException}.
 *
 * <p><b>Memory:</b> nothing allocated per message or stripe.
 *
 * <p><b>Concurrency:</b> the engine's thread (the connection's progress thread) only, but
 * {@link RailCounters} snapshots from any thread.
 */
final class ConnectionStriping implements StripePolicy {
    /** Busy time over which a rail's drain rate is averaged, ns. */
    static final long RATE_WINDOW_NS = 5_000_000L;

    private final int railCount;
    private final StripingPolicy striping;
    private final long commitHorizonNs;
    private final RailCounters counters;
    private final CompletionOrder order;
    private final double[] fillRate;
    /** Per rail: measured stripe drain rate, bytes/ns, 0 until a window was measured. */
    private final double[] drainBytesPerNs;
    private final long[] windowBytes;
    private final long[] windowNs;
    private final double[] shareScratch;
    private @Nullable StripeEngine engine;
    /** The engine's backlog per rail, bytes (all 0 before an engine is attached). */
    private long[] backlogBytes;
    private long removed;
    private boolean splitting;
    /** Latest node clock time seen, ns; valid once {@link #clockKnown}. */
    private long clockNs;
    private boolean clockKnown;

    ConnectionStriping(int railCount, StripingPolicy striping, long commitHorizonNs, RailCounters counters,
                       CompletionOrder order) {
        this.railCount = railCount;
        this.striping = striping;
        this.commitHorizonNs = commitHorizonNs;
        this.counters = counters;
        this.order = order;
        this.fillRate = new double[railCount];
        this.drainBytesPerNs = new double[railCount];
        this.windowBytes = new long[railCount];
        this.windowNs = new long[railCount];
        this.shareScratch = new double[railCount];
        this.backlogBytes = new long[railCount];
    }

    @Override
    public void attach(StripeEngine engine) {
        if (this.engine != null && this.engine != engine) {
            throw new IllegalStateException(striping.name() + " of a connection scheduler serves one stripe engine; "
                + "a scheduler (and its stripePolicy()) belongs to one connection");
        }
        this.engine = engine;
        this.backlogBytes = engine.backlogView();
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        splitting = true;
        noteClock(nowNs);
        boolean byRate = striping.splitsByRate();
        long usable = byRate ? withinHorizon(usableRails) : usableRails;
        striping.split(lengthBytes, usable, nowNs, stripeBytes);
        if (byRate) {
            CommonFinishSplit.topUp(lengthBytes, usable, backlogBytes, 1, stripeBytes, fillRate);
        }
        // metrics count stripes where they are placed: a whole write was counted by select, and a stripe
        // posted again after a failover is not placed again
        for (int rail = 0; rail < railCount; rail++) {
            if (stripeBytes[rail] > 0) {
                counters.posted(rail);
            }
        }
    }

    @Override
    public void onStripePosted(int rail, long lengthBytes, long nowNs) {
        noteClock(nowNs);
        striping.onStripePosted(rail, lengthBytes, nowNs);
    }

    @Override
    public void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs, boolean railIdleAtPost,
                                  int outstandingOnRail) {
        noteClock(completedNs);
        StripeEngine e = engine;
        long previousNs = e == null ? 0 : e.lastCompletionNs(rail);
        long deliveryNs = completedNs - Math.max(postedNs, previousNs);
        if (!railIdleAtPost || drainBytesPerNs[rail] == 0) {
            // queued behind another WRITE, its delivery time is the rail's service time alone; posted to an
            // idle rail it also holds the round trip to the peer's acknowledgement, and counting that would
            // shrink the horizon of a rail that ran short, which then runs shorter still
            measureDrain(rail, lengthBytes, deliveryNs);
        }
        counters.completed(rail, lengthBytes);
        striping.onStripeCompleted(rail, lengthBytes, postedNs, completedNs, railIdleAtPost, outstandingOnRail);
    }

    @Override
    public void onMessageCarried(long psn, long carriedOnRails) {
        counters.messageCompleted(carriedOnRails);
        order.carried((int) psn);
    }

    @Override
    public void onMessageCompleted(MessageTimings timings) {
        striping.onMessageCompleted(timings);
        recordWeights();
    }

    @Override
    public void onRailRemoved(int rail) {
        railRemoved(rail);
    }

    /** {@code rail} failed: the striping policy hears it once, whether from the scheduler or the engine first. */
    void railRemoved(int rail) {
        if ((removed & (1L << rail)) == 0) {
            removed |= 1L << rail;
            striping.onRailRemoved(rail);
        }
    }

    /**
     * True while some rail not failed would drain its backlog within the commit horizon at its measured
     * rate (an idle rail, or one with no rate measured yet, always would); true too when every rail
     * failed (the connection decides). See the class comment.
     */
    boolean stripeNow() {
        boolean considered = false;
        for (int rail = 0; rail < railCount; rail++) {
            if ((removed & (1L << rail)) == 0) {
                considered = true;
                if (withinHorizon(rail)) {
                    return true;
                }
            }
        }
        return !considered;
    }

    /**
     * The rails of {@code usable} within the commit horizon, or {@code usable} itself when none is. A
     * rate-following split gives the others nothing for this message: each stripe holds its whole
     * message's buffers until it completes, so a slowed rail topped up a little on every message would
     * soon hold every buffer of the window (measured: the other 250 Mbit rail idle for 0.3 s).
     */
    private long withinHorizon(long usable) {
        long within = 0;
        for (int rail = 0; rail < railCount; rail++) {
            if (RailMask.contains(usable, rail) && withinHorizon(rail)) {
                within |= 1L << rail;
            }
        }
        return within != 0 ? within : usable;
    }

    private boolean withinHorizon(int rail) {
        double rate = drainBytesPerNs[rail];
        return rate <= 0 || backlogBytes[rail] < rate * commitHorizonNs;
    }

    private void measureDrain(int rail, long lengthBytes, long deliveryNs) {
        windowBytes[rail] += lengthBytes;
        windowNs[rail] += Math.max(0, deliveryNs);
        if (windowNs[rail] >= RATE_WINDOW_NS) {
            double rate = (double) windowBytes[rail] / windowNs[rail];
            drainBytesPerNs[rail] = drainBytesPerNs[rail] == 0 ? rate : 0.5 * (drainBytesPerNs[rail] + rate);
            windowBytes[rail] = 0;
            windowNs[rail] = 0;
        }
    }

    /** Whether the connection splits messages through this policy (then {@code select} only places RTSs). */
    boolean splitting() {
        return splitting;
    }

    /** Bytes posted on {@code rail} and not completed, as the engine counts them. */
    long backlogBytes(int rail) {
        return backlogBytes[rail];
    }

    /** Measured drain rate of {@code rail}'s stripes, bytes/s; 0 before a first measurement. */
    double drainRateBytesPerSec(int rail) {
        return drainBytesPerNs[rail] * 1e9;
    }

    /** A node clock time from the connection; the first one stamps the initial weights. */
    private void noteClock(long nowNs) {
        if (!clockKnown) {
            clockKnown = true;
            clockNs = nowNs;
            recordWeights();
            return;
        }
        clockNs = Math.max(clockNs, nowNs);
    }

    /**
     * A weight sample at the latest node time seen; none before a time was seen (feedback of whole
     * messages and rail failures comes without a clock).
     */
    void recordWeights() {
        if (clockKnown) {
            for (int rail = 0; rail < railCount; rail++) {
                shareScratch[rail] = striping.share(rail);
            }
            counters.recordWeights(clockNs, shareScratch);
        }
    }

    @Override
    public String name() {
        return striping.name();
    }
}
