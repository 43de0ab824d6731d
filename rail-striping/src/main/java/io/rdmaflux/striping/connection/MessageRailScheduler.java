package io.rdmaflux.striping.connection;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.striping.MessageTimings;
import io.rdmaflux.striping.MultiplexingPolicy;
import io.rdmaflux.striping.RailMask;
import io.rdmaflux.striping.RailsSpec;
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
 * Sampled striping needs per-message splits; here it keeps its initial (even) shares.
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
    }

    @Override
    public int select(int psn, int lengthBytes, Subchannel[] subchannels) {
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
        } else {
            rail = earliestFinish(lengthBytes);
            if (rail < 0 || !RailMask.contains(canSend, rail)) {
                return -1;
            }
            assignedBytes[rail] += lengthBytes;
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
        if (postedCount[rail] == 0) {
            return;
        }
        int slot = postedHead[rail];
        long length = postedLength[rail][slot];
        long backlog = postedBacklog[rail][slot];
        postedHead[rail] = (slot + 1) % postedLength[rail].length;
        postedCount[rail]--;
        inFlightBytes[rail] -= length;
        if (length < switchoverThresholdBytes || elapsedNs <= 0) {
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
        }
    }

    /** Called by reactive-core when a subchannel failed: no more messages go to it. */
    public void onSubchannelFailed(Subchannel subchannel) {
        failed |= 1L << subchannel.rail();
        striping.onRailRemoved(subchannel.rail());
    }

    /** Current weight of {@code rail}, for metrics. */
    double share(int rail) {
        return striping.share(rail);
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
