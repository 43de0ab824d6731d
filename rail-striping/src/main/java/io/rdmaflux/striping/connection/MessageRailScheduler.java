package io.rdmaflux.striping.connection;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.striping.CommonFinishSplit;
import io.rdmaflux.core.stripe.MessageTimings;
import io.rdmaflux.striping.MultiplexingPolicy;
import io.rdmaflux.striping.RailCounters;
import io.rdmaflux.striping.RailMask;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.core.stripe.RecordedMessageTimings;
import io.rdmaflux.striping.StripingMetrics;
import io.rdmaflux.striping.StripingPolicy;

/**
 * The communication scheduler of seed 000 §4.1 at reactive-core's granularity: its
 * {@link SubchannelScheduler} SPI places each message whole on one subchannel (a subchannel
 * reassembles its own fragments), so messages are not split here.
 *
 * <ul>
 *   <li>Below the switchover threshold the {@link MultiplexingPolicy} picks among the rails that
 *       can send now (so a rail short of credits is skipped).</li>
 *   <li>At or above it, the striping policy's weights decide at message granularity, as deficit
 *       round robin: the next message goes to the rail whose bytes since the weights last changed,
 *       plus the message, are smallest relative to its weight; the scheduler waits (-1) while that
 *       rail has no credit, so bytes per rail follow the weights.</li>
 *   <li>Feedback: each completion gives the rail's rate as bytes in flight on it at post time plus
 *       the message, over the message's elapsed time (it waited for those bytes); once every active
 *       rail has a fresh rate, the striping policy gets one {@link MessageTimings} round with
 *       {@code t_i = S_i / rate_i} for {@code S_i} proportional to the current weights, which is
 *       seed 000 eq. 4 applied to whole messages.</li>
 * </ul>
 * On this whole-message path sampled striping (seed 004) has no split to make: its share stays the
 * last split's, the even start, so it places large messages like even weights.
 *
 * <p>Where the connection splits large messages itself (reactive-core's rendezvous path calls
 * {@code stripeThresholdBytes()}, {@code stripe(..)} and {@code onStripeCompleted(..)}), those
 * methods run the striping policy on each message exactly as {@code CommunicationScheduler} does,
 * with per-stripe feedback, and {@code select} then only places the small messages and RTSs. There
 * sampled striping splits every message by its transfer-time models and each rail's time until idle.
 *
 * <p><b>Per-stripe feedback</b> ({@link StripingPolicy#onStripeCompleted}): {@code railIdleAtPost}
 * is whether every earlier RDMA WRITE on the carrying rail had completed when the stripe was posted
 * (its predecessor's completion time at or before its post time: an RC rail completes in post order,
 * so the previous completion seen on the rail is the last one ahead of it); {@code outstandingOnRail}
 * counts the stripes {@link #stripe} split onto the rail that have not completed. With many messages
 * in flight a rail is rarely idle: a stripe that queued behind others measures the backlog, not the
 * rail, and sampled striping folds only clean (idle-at-post) times into its model, and resets its
 * time until idle only when the rail's last outstanding stripe completed. Not counted as busy time:
 * the RTSs and the small messages {@code select} places (DATA frames on the same queue pair).
 * {@code select} has no clock to post them at and their completions ({@code onMessageCompleted})
 * carry no completion time, so the policy could neither start nor end their busy time, and the
 * outstanding count that ends a rail's busy time could not include them. Each is below the
 * switchover threshold (an RTS is a header), so a stripe queued behind them is late by their
 * serialization time, and is still taken as clean when no WRITE was ahead of it.
 *
 * <p><b>Metrics</b> ({@link #metrics()}, read with {@code RailsChannelFactory.metrics(connection)}):
 * per rail the payload bytes of stripes and of whole messages completed, messages (once per rail
 * that carried bytes of them), stripes posted and completed (a whole message counts as one); the
 * weights and their history; messages whose completion came while an earlier PSN was outstanding.
 * Weight samples carry the node clock of the stripe completion that updated them: the first is the
 * initial weights at the first stripe event; whole-message feedback and rail failures, which come
 * without a clock, are stamped with the latest node time seen and not recorded before one was seen.
 *
 * <p><b>Common finish time</b> (a deviation from seed 000 §4.4, which splits every message by the
 * weights alone): when the policy's split follows measured rates
 * ({@link StripingPolicy#splitsByRate()}, adaptive striping), the bytes a message puts on each rail
 * are chosen so that every rail finishes its outstanding stripes plus the new one at the same time,
 * with the weights as the rails' relative rates (seed 004 §II-B adds each rail's time until idle in
 * the same way): {@code s_i = max(0, T·w_i − B_i)}, {@code Σ s_i = S}, for {@code B_i} the stripe
 * bytes split onto rail {@code i} and not yet completed. With equal backlogs per unit of weight this
 * is exactly the weighted split. Why: on a real fabric many messages are in flight (dozens of stripes
 * queued per rail in socket and NIC buffers), and every message split while the weights are still off
 * (the first ones, split evenly before any feedback) or while one rail stalls for a few ms (its TCP
 * stream, its progress thread descheduled) leaves a backlog that the weights alone never drain: the
 * faster rail runs dry while the message window waits on the other. Measured over two tbf-shaped veth
 * rails (rail-striping/README.md, two namespaces). Static policies (even, weighted) keep the user's
 * split. For the same reason a large message's RTS goes on the rail whose outstanding stripes drain
 * first: it waits behind them on its RC stream.
 *
 * <p><b>Commit horizon</b> (rdmaflux's own extension, not in the seed papers: seed 004 §II-B uses a
 * rail's time until idle to split a message, not to decide when to split it; {@link #stripeNow},
 * {@link RailsSpec#commitHorizonNs}): the connection
 * asks before it splits each granted message, and gets a yes only while some rail not failed would
 * drain its queued stripes within the horizon at its measured rate. Why: the
 * receiver grants a whole window of messages (16 × 1 MiB over the two-namespace rails), and split at
 * once they put a share of every one of them on each rail. When a rail then slows (its tbf rate cut to
 * a quarter) the messages' buffers wait for that rail's megabytes at its new rate while the other rail
 * runs dry: 0.5–0.7 s before the aggregate recovered, measured. Committed a horizon's worth at a time,
 * the slowed rail holds a horizon of work and the next messages are split, by the rails' backlogs, onto
 * the others. The rate is each rail's stripe bytes over their delivery times (as
 * {@link MessageTimings}) for stripes that were queued behind another (a stripe posted to an idle rail
 * also waits a round trip), summed over {@value #RATE_WINDOW_NS} ns of busy time so that a burst of
 * completions found at one poll does not swing it. A rail with nothing queued opens the gate whatever
 * its share (sampled striping's share is the last split's; a rail it gave nothing may be idle now), so
 * a rail a static policy weights 0 keeps the gate open.
 *
 * <p><b>Concurrency:</b> progress thread only, as the SPI says.
 */
final class MessageRailScheduler implements SubchannelScheduler {
    private final int railCount;
    private final long switchoverThresholdBytes;
    private final MultiplexingPolicy multiplexing;
    private final StripingPolicy striping;
    private final long[] inFlightBytes;
    private final long[] assignedBytes;
    /** Per rail, a ring of (length, bytes in flight at post) of the messages posted, in post order. */
    private long[][] postedLength;
    private long[][] postedBacklog;
    private final int[] postedHead;
    private final int[] postedCount;
    private final double[] rateBytesPerNs;
    private long freshRates;
    private long failed;
    private final Round round = new Round();
    /** Set once the connection splits messages itself through {@link #stripe}. */
    private boolean connectionStripes;
    private final StripedMessage[] striped = new StripedMessage[STRIPED_WINDOW];
    private final long[] lastCompletionNs;
    /** Per rail: stripe bytes split onto it by {@link #stripe} and not completed yet (B_i). */
    private final long[] stripeBacklogBytes;
    /** Per rail: stripes split onto it by {@link #stripe} and not completed (after a failover, still counted on the rail they were split for). */
    private final int[] outstandingStripes;
    /** Scratch of {@link CommonFinishSplit#topUp}. */
    private final double[] fillRate;
    private static final int STRIPED_WINDOW = 1024;
    /** Busy time over which a rail's drain rate is averaged, ns. */
    static final long RATE_WINDOW_NS = 5_000_000L;
    private final long commitHorizonNs;
    /** Per rail: measured stripe drain rate, bytes/ns, 0 until a window was measured. */
    private final double[] drainBytesPerNs;
    private final long[] windowBytes;
    private final long[] windowNs;
    /** Per PSN slot: the rails on which an RDMA WRITE of the message completed, until the message completed. */
    private final int[] carriedPsn = new int[STRIPED_WINDOW];
    private final boolean[] carriedValid = new boolean[STRIPED_WINDOW];
    private final long[] carriedOn = new long[STRIPED_WINDOW];
    private final RailCounters counters;
    private final double[] shareScratch;
    /** Latest node clock time seen (stripe calls carry it), ns; valid once {@link #clockKnown}. */
    private long clockNs;
    private boolean clockKnown;
    /** Completion order: the oldest PSN not completed, and which later ones completed already. */
    private int headPsn;
    private boolean headKnown;
    private boolean[] completedAhead = new boolean[64];

    MessageRailScheduler(RailsSpec spec) {
        this.railCount = spec.railCount();
        this.switchoverThresholdBytes = spec.switchoverThresholdBytes();
        this.multiplexing = spec.multiplexing().create(railCount);
        this.striping = spec.striping().create(railCount, 1);
        this.inFlightBytes = new long[railCount];
        this.assignedBytes = new long[railCount];
        this.postedLength = new long[railCount][16];
        this.postedBacklog = new long[railCount][16];
        this.postedHead = new int[railCount];
        this.postedCount = new int[railCount];
        this.rateBytesPerNs = new double[railCount];
        this.lastCompletionNs = new long[railCount];
        this.stripeBacklogBytes = new long[railCount];
        this.outstandingStripes = new int[railCount];
        this.fillRate = new double[railCount];
        this.commitHorizonNs = spec.commitHorizonNs();
        this.drainBytesPerNs = new double[railCount];
        this.windowBytes = new long[railCount];
        this.windowNs = new long[railCount];
        this.counters = new RailCounters(railCount, spec.weightHistoryCapacity());
        this.shareScratch = new double[railCount];
        for (int i = 0; i < STRIPED_WINDOW; i++) {
            striped[i] = new StripedMessage(railCount);
        }
    }

    @Override
    public int select(int psn, int lengthBytes, Subchannel[] subchannels) {
        if (!headKnown) {
            headKnown = true;
            headPsn = psn;
        }
        long canSend = 0;
        for (int i = 0; i < railCount; i++) {
            if ((failed & (1L << i)) == 0 && subchannels[i].canSend()) {
                canSend |= 1L << i;
            }
        }
        int rail;
        if (lengthBytes < switchoverThresholdBytes) {
            if (canSend == 0) {
                return -1;
            }
            rail = multiplexing.selectRail(lengthBytes, canSend);
        } else if (connectionStripes) {
            // the connection stripes large messages itself (stripe()); select only places the RTS
            if (canSend == 0) {
                return -1;
            }
            rail = firstIdle(canSend);
            if (rail < 0) {
                rail = multiplexing.selectRail(lengthBytes, canSend);
            }
        } else {
            rail = earliestFinish(lengthBytes);
            if (rail < 0 || !RailMask.contains(canSend, rail)) {
                return -1;
            }
            assignedBytes[rail] += lengthBytes;
        }
        if (lengthBytes < switchoverThresholdBytes) {
            // a large message is counted where it turns out whole (onMessageCompleted) or split (stripe)
            counters.posted(rail);
        }
        // posted and completed per rail in order (RC); record what the message waits behind
        enqueue(rail, lengthBytes, inFlightBytes[rail]);
        inFlightBytes[rail] += lengthBytes;
        return rail;
    }

    private void enqueue(int rail, long length, long backlog) {
        long[] len = postedLength[rail];
        if (postedCount[rail] == len.length) {
            int n = len.length;
            long[] grownLen = new long[n * 2];
            long[] grownBacklog = new long[n * 2];
            for (int i = 0; i < n; i++) {
                grownLen[i] = len[(postedHead[rail] + i) % n];
                grownBacklog[i] = postedBacklog[rail][(postedHead[rail] + i) % n];
            }
            postedLength[rail] = grownLen;
            postedBacklog[rail] = grownBacklog;
            postedHead[rail] = 0;
            len = grownLen;
        }
        int slot = (postedHead[rail] + postedCount[rail]) % len.length;
        len[slot] = length;
        postedBacklog[rail][slot] = backlog;
        postedCount[rail]++;
    }

    /**
     * Where an RTS waits least: the rail in {@code candidates} whose outstanding stripes drain
     * first ({@code B_i / w_i}, the weights as relative rates), or -1 when none has stripes
     * outstanding (then the multiplexing policy spreads the RTSs). On an RC rail the RTS queues
     * behind the rail's own stripes (one ordered stream per queue pair; over TCP, behind megabytes
     * in the socket buffer): sent behind the slow rail's backlog it held back a message the
     * fast rail could have carried at once (measured: the 400 Mbit rail idle 350 ms after the even
     * start on 400 + 100 Mbit rails).
     */
    private int firstIdle(long candidates) {
        int best = -1;
        double bestDrain = Double.MAX_VALUE;
        boolean anyBacklog = false;
        for (int i = 0; i < railCount; i++) {
            if (!RailMask.contains(candidates, i)) {
                continue;
            }
            anyBacklog |= stripeBacklogBytes[i] > 0;
            double drain = stripeBacklogBytes[i] / Math.max(striping.share(i), 1e-6);
            if (drain < bestDrain) {
                bestDrain = drain;
                best = i;
            }
        }
        return anyBacklog ? best : -1;
    }

    private int earliestFinish(long lengthBytes) {
        int best = -1;
        double bestFinish = Double.MAX_VALUE;
        for (int i = 0; i < railCount; i++) {
            double share = striping.share(i);
            if ((failed & (1L << i)) != 0 || share <= 0) {
                continue;
            }
            // bytes given to the rail since the weights last changed: per-rail bytes follow the weights
            double finish = (assignedBytes[i] + lengthBytes) / share;
            if (finish < bestFinish) {
                bestFinish = finish;
                best = i;
            }
        }
        return best;
    }

    @Override
    public void onMessageCompleted(Subchannel subchannel, int psn, int lengthBytes, long elapsedNs) {
        int rail = subchannel.rail();
        countCompleted(rail, psn, lengthBytes);
        int slot = popPosted(rail);
        if (slot < 0) {
            return;
        }
        long length = postedLength[rail][slot];
        long backlog = postedBacklog[rail][slot];
        if (length < switchoverThresholdBytes || elapsedNs <= 0) {
            return;
        }
        if (connectionStripes) {
            // The connection striped this message and onStripeCompleted already fed the policy each
            // rail's own RDMA WRITE time. The message's elapsed time also holds the RTS -> CTS round
            // trip on the rail that carried the RTS, a fixed cost that would pull the weights
            // towards an even split (seen as ~68:32 instead of 4:1 on 4:1 rails).
            return;
        }
        rateBytesPerNs[rail] = (double) (backlog + length) / elapsedNs;
        freshRates |= 1L << rail;
        long active = RailMask.all(railCount) & ~failed;
        if ((freshRates & active) == active && RailMask.count(active) > 1) {
            freshRates = 0;
            double before = striping.share(0);
            striping.onMessageCompleted(round.of(active));
            if (striping.share(0) != before) {
                // new weights: deficits counted under the old ones no longer apply
                java.util.Arrays.fill(assignedBytes, 0);
            }
            recordWeights();
        }
    }

    /**
     * The receiver discarded rendezvous message {@code psn} (it closed its inbound side, or already held
     * the message whose RTS went again after a failover): it leaves the RTS rail's queue of messages in
     * flight and the completion order like a completed one, so later completions pair with their own
     * posts and are not taken as out of order, but it counts no bytes, no completed message and gives no
     * rate (its elapsed time is an RTS -> CTS round trip, no transfer). Stripes of it that completed
     * before were counted as stripes.
     */
    @Override
    public void onMessageDiscarded(Subchannel subchannel, int psn, int lengthBytes) {
        int slot = psn & (STRIPED_WINDOW - 1);
        if (carriedValid[slot] && carriedPsn[slot] == psn) {
            carriedValid[slot] = false;
        }
        leaveCompletionOrder(psn, false);
        popPosted(subchannel.rail());
    }

    /** Takes the oldest message posted on {@code rail} off its queue; returns its slot, or -1 if none. */
    private int popPosted(int rail) {
        if (postedCount[rail] == 0) {
            return -1;
        }
        int slot = postedHead[rail];
        postedHead[rail] = (slot + 1) % postedLength[rail].length;
        postedCount[rail]--;
        inFlightBytes[rail] -= postedLength[rail][slot];
        return slot;
    }

    /**
     * Metrics of a completed message: one whose bytes went as RDMA WRITEs counts once on every rail
     * that completed one (their bytes were counted per stripe); one sent whole as DATA frames counts
     * its bytes, one stripe and one message on {@code rail}.
     */
    private void countCompleted(int rail, int psn, int lengthBytes) {
        int slot = psn & (STRIPED_WINDOW - 1);
        if (carriedValid[slot] && carriedPsn[slot] == psn) {
            carriedValid[slot] = false;
            counters.messageCompleted(carriedOn[slot]);
        } else {
            if (lengthBytes >= switchoverThresholdBytes) {
                counters.posted(rail);
            }
            counters.completed(rail, lengthBytes);
            counters.messageCompleted(1L << rail);
        }
        counters.messageReleased();
        leaveCompletionOrder(psn, true);
    }

    /** Message {@code psn} is no longer outstanding; {@code completed}: counted out of order if an earlier one is. */
    private void leaveCompletionOrder(int psn, boolean completed) {
        if (!headKnown) {
            headKnown = true;
            headPsn = psn;
        }
        int ahead = psn - headPsn;
        if (ahead < 0) {
            return;
        }
        if (ahead > 0) {
            if (completed) {
                counters.outOfOrderCompletion();
            }
            while (ahead >= completedAhead.length) {
                growCompletedAhead();
            }
            completedAhead[psn & (completedAhead.length - 1)] = true;
            return;
        }
        headPsn++;
        int mask = completedAhead.length - 1;
        while (completedAhead[headPsn & mask]) {
            completedAhead[headPsn & mask] = false;
            headPsn++;
        }
    }

    private void growCompletedAhead() {
        int n = completedAhead.length;
        boolean[] grown = new boolean[n * 2];
        for (int d = 0; d < n; d++) {
            grown[(headPsn + d) & (2 * n - 1)] = completedAhead[(headPsn + d) & (n - 1)];
        }
        completedAhead = grown;
    }

    // ------------------------------------------------ per-message striping by the connection
    // (reactive-core's rendezvous path: stripeThresholdBytes / stripe / onStripeCompleted). These are
    // plain public methods so this class compiles against connection SPIs with or without them.

    /** Messages of at least this many bytes are split by {@link #stripe} (the spec's switchover threshold). */
    public long stripeThresholdBytes() {
        return switchoverThresholdBytes;
    }

    /**
     * Splits message {@code psn} with the striping policy over the rails not failed (seed 000 §4.4–4.5,
     * seed 004): {@code stripeBytes[i]} bytes go on subchannel {@code i}, contiguous in rail order.
     */
    public void stripe(int psn, int lengthBytes, Subchannel[] subchannels, long nowNs, long[] stripeBytes) {
        connectionStripes = true;
        noteClock(nowNs);
        long usable = RailMask.all(railCount) & ~failed;
        if (usable == 0) {
            return;
        }
        if (striping.splitsByRate()) {
            usable = withinHorizon(usable);
        }
        striping.split(lengthBytes, usable, nowNs, stripeBytes);
        if (striping.splitsByRate()) {
            CommonFinishSplit.topUp(lengthBytes, usable, stripeBacklogBytes, 1, stripeBytes, fillRate);
        }
        StripedMessage m = striped[psn & (STRIPED_WINDOW - 1)];
        m.start(psn, lengthBytes);
        for (int rail = 0; rail < railCount; rail++) {
            if (stripeBytes[rail] > 0) {
                stripeBacklogBytes[rail] += stripeBytes[rail];
                outstandingStripes[rail]++;
                m.addStripe(rail, stripeBytes[rail]);
                m.outstanding++;
                counters.posted(rail);
                striping.onStripePosted(rail, stripeBytes[rail], nowNs);
            }
        }
    }

    /**
     * One RDMA WRITE of message {@code psn} completed on {@code subchannel}: a stripe {@link #stripe}
     * split, or a message below the threshold written whole. The policy gets the stripe with whether
     * its rail was idle when it was posted and how many stripes remain outstanding there (see the
     * class comment); its delivery time (completion minus the later of its post and the previous
     * completion on the rail, see {@code MessageTimings}) joins the message's timings, which go to the
     * policy after the message's last stripe (eq. 4).
     */
    public void onStripeCompleted(Subchannel subchannel, int psn, long offsetBytes, long lengthBytes, long postedNs,
                                  long completedNs) {
        int rail = subchannel.rail();
        noteClock(completedNs);
        // the carrier's backlog: after a failover a stripe split for another rail may complete here
        stripeBacklogBytes[rail] = Math.max(0, stripeBacklogBytes[rail] - lengthBytes);
        // RC completes a rail's WRITEs in post order: the previous completion seen here is the last
        // WRITE that was ahead of this one, so the rail was idle at the post iff it came by then
        boolean idleAtPost = lastCompletionNs[rail] <= postedNs;
        long deliveryNs = completedNs - Math.max(postedNs, lastCompletionNs[rail]);
        lastCompletionNs[rail] = completedNs;
        if (!idleAtPost || drainBytesPerNs[rail] == 0) {
            // queued behind another WRITE, its delivery time is the rail's service time alone; posted to
            // an idle rail it also holds the round trip to the peer's acknowledgement, and counting that
            // would shrink the horizon of a rail that ran short, which then runs shorter still
            measureDrain(rail, lengthBytes, deliveryNs);
        }
        counters.completed(rail, lengthBytes);
        int slot = psn & (STRIPED_WINDOW - 1);
        if (!carriedValid[slot] || carriedPsn[slot] != psn) {
            carriedValid[slot] = true;
            carriedPsn[slot] = psn;
            carriedOn[slot] = 0;
        }
        carriedOn[slot] |= 1L << rail;
        StripedMessage m = striped[slot];
        boolean ours = m.psn == psn && m.outstanding > 0;
        if (ours) {
            int splitFor = m.railAt(offsetBytes);
            if (splitFor >= 0 && outstandingStripes[splitFor] > 0) {
                outstandingStripes[splitFor]--;
            }
        }
        striping.onStripeCompleted(rail, lengthBytes, postedNs, completedNs, idleAtPost, outstandingStripes[rail]);
        if (!ours) {
            return;
        }
        if (deliveryNs <= 0) {
            m.censor();
        }
        m.addDelivery(rail, deliveryNs);
        if (--m.outstanding == 0) {
            m.completed(completedNs);
            striping.onMessageCompleted(m);
            recordWeights();
        }
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

    private void recordWeights() {
        if (clockKnown) {
            for (int rail = 0; rail < railCount; rail++) {
                shareScratch[rail] = striping.share(rail);
            }
            counters.recordWeights(clockNs, shareScratch);
        }
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

    /**
     * True while some rail not failed would drain its queued stripes within the commit horizon at its
     * measured rate (an idle rail, or one with no rate measured yet, always would): see the class
     * comment. Every such rail counts, whatever its current share: sampled striping's share is only
     * the last split's, so a rail that got no bytes then but sits idle now would get some in the next
     * split, and waiting on the other rails' backlogs would leave it idle.
     */
    @Override
    public boolean stripeNow(long nowNs) {
        boolean considered = false;
        for (int rail = 0; rail < railCount; rail++) {
            if ((failed & (1L << rail)) != 0) {
                continue;
            }
            considered = true;
            double rate = drainBytesPerNs[rail];
            if (rate <= 0 || stripeBacklogBytes[rail] < rate * commitHorizonNs) {
                return true;
            }
        }
        // no rail to wait for (all failed): let the connection split and decide
        return !considered;
    }

    /**
     * The rails of {@code usable} that would drain their queued stripes within the commit horizon (or
     * have no rate measured yet), or {@code usable} itself when none would. A rate-following split gives
     * the others nothing for this message: each stripe holds its whole message's buffers until it
     * completes, so a slowed rail topped up a little on every message would soon hold every buffer of
     * the window while the other rails ran dry (measured over the two-namespace rails: the 250 Mbit
     * rail idle for 0.3 s after the other dropped to a quarter).
     */
    private long withinHorizon(long usable) {
        long within = 0;
        for (int rail = 0; rail < railCount; rail++) {
            if (RailMask.contains(usable, rail)) {
                double rate = drainBytesPerNs[rail];
                if (rate <= 0 || stripeBacklogBytes[rail] < rate * commitHorizonNs) {
                    within |= 1L << rail;
                }
            }
        }
        return within != 0 ? within : usable;
    }

    /** Measured drain rate of {@code rail}'s stripes, bytes/s; 0 before a first measurement. */
    double drainRateBytesPerSec(int rail) {
        return drainBytesPerNs[rail] * 1e9;
    }

    /** Stripe bookkeeping of one message the connection striped. */
    private static final class StripedMessage extends RecordedMessageTimings {
        private final int railCount;
        int psn = -1;
        int outstanding;

        StripedMessage(int railCount) {
            super(railCount);
            this.railCount = railCount;
        }

        void start(int psn, long lengthBytes) {
            this.psn = psn;
            outstanding = 0;
            reset(lengthBytes);
        }

        /** The rail whose stripe starts at {@code offsetBytes} (stripes are contiguous in rail order), or -1. */
        int railAt(long offsetBytes) {
            long at = 0;
            for (int rail = 0; rail < railCount; rail++) {
                long bytes = stripeBytes(rail);
                if (bytes > 0 && at == offsetBytes) {
                    return rail;
                }
                at += bytes;
            }
            return -1;
        }
    }

    /** Called by reactive-core when a subchannel failed: no more messages go to it. */
    public void onSubchannelFailed(Subchannel subchannel) {
        int rail = subchannel.rail();
        failed |= 1L << rail;
        stripeBacklogBytes[rail] = 0;
        outstandingStripes[rail] = 0;
        counters.railFailed(rail);
        striping.onRailRemoved(rail);
        recordWeights();
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

    /** One feedback round: stripe sizes in proportion to the weights, times from measured rates. */
    private final class Round implements MessageTimings {
        private static final long NOMINAL_BYTES = 1 << 20;
        private long used;

        Round of(long active) {
            this.used = active;
            return this;
        }

        @Override
        public long lengthBytes() {
            return NOMINAL_BYTES;
        }

        @Override
        public long stripeBytes(int rail) {
            return RailMask.contains(used, rail) ? Math.max(1, (long) (NOMINAL_BYTES * striping.share(rail))) : 0;
        }

        @Override
        public long deliveryTimeNs(int rail) {
            return Math.max(1, (long) (stripeBytes(rail) / rateBytesPerNs[rail]));
        }

        @Override
        public long railsUsed() {
            return used;
        }

        @Override
        public long completedNs() {
            return 0;
        }

        @Override
        public boolean resent() {
            return false;
        }
    }

    @Override
    public String toString() {
        return "MessageRailScheduler{" + multiplexing.name() + "/" + striping.name() + ", threshold=" + switchoverThresholdBytes + "}";
    }
}
