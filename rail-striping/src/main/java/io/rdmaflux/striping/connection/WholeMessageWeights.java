package io.rdmaflux.striping.connection;

import io.rdmaflux.core.stripe.MessageTimings;
import io.rdmaflux.striping.RailMask;
import io.rdmaflux.striping.StripingPolicy;
import java.util.Arrays;

/**
 * Striping weights applied to whole messages, for a connection that does not split large messages
 * itself (rendezvous off: they go as DATA frames on one subchannel, seed 000 &sect;4.1 at message
 * granularity).
 *
 * <ul>
 *   <li>Placement ({@link #earliestFinish}), as deficit round robin: the next large message goes to the
 *       rail whose bytes since the weights last changed, plus the message, are smallest relative to its
 *       weight, so bytes per rail follow the weights.</li>
 *   <li>Feedback ({@link #completed}): each completion gives the rail's rate as the bytes in flight on it
 *       when the message was placed plus the message, over the message's elapsed time (it waited for
 *       those bytes); once every active rail has a fresh rate, the striping policy gets one
 *       {@link MessageTimings} round with {@code t_i = S_i / rate_i} for {@code S_i} proportional to the
 *       current weights: seed 000 eq. 4 applied to whole messages. Sampled striping (seed 004) has no
 *       split to make here: its share stays the last split's, the even start.</li>
 * </ul>
 * Every message {@code select} places is queued here per rail (an RC subchannel completes in order), so
 * a completion pairs with its own placement.
 *
 * <p><b>Memory:</b> the per-rail queues grow (doubling) to the messages in flight, then allocate nothing.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class WholeMessageWeights {
    private final int railCount;
    private final long switchoverThresholdBytes;
    private final StripingPolicy striping;
    private final long[] inFlightBytes;
    private final long[] assignedBytes;
    /** Per rail, a ring of (length, bytes in flight at placement) of the messages placed, in order. */
    private final long[][] placedLength;
    private final long[][] placedBacklog;
    private final int[] head;
    private final int[] count;
    private final double[] rateBytesPerNs;
    private long freshRates;
    private final Round round = new Round();

    WholeMessageWeights(int railCount, long switchoverThresholdBytes, StripingPolicy striping) {
        this.railCount = railCount;
        this.switchoverThresholdBytes = switchoverThresholdBytes;
        this.striping = striping;
        this.inFlightBytes = new long[railCount];
        this.assignedBytes = new long[railCount];
        this.placedLength = new long[railCount][16];
        this.placedBacklog = new long[railCount][16];
        this.head = new int[railCount];
        this.count = new int[railCount];
        this.rateBytesPerNs = new double[railCount];
    }

    /** The rail for a large message of {@code lengthBytes} by the weights, or -1 when every rail not in {@code failed} has weight 0. */
    int earliestFinish(long lengthBytes, long failed) {
        int best = -1;
        double bestFinish = Double.MAX_VALUE;
        for (int i = 0; i < railCount; i++) {
            double share = striping.share(i);
            if ((failed & (1L << i)) != 0 || share <= 0) {
                continue;
            }
            double finish = (assignedBytes[i] + lengthBytes) / share;
            if (finish < bestFinish) {
                bestFinish = finish;
                best = i;
            }
        }
        return best;
    }

    /** A large message of {@code lengthBytes} went to {@code rail} by {@link #earliestFinish}. */
    void assigned(int rail, long lengthBytes) {
        assignedBytes[rail] += lengthBytes;
    }

    /** {@code select} placed a message of {@code lengthBytes} on {@code rail}. */
    void placed(int rail, long lengthBytes) {
        if (count[rail] == placedLength[rail].length) {
            grow(rail);
        }
        int slot = (head[rail] + count[rail]) % placedLength[rail].length;
        placedLength[rail][slot] = lengthBytes;
        placedBacklog[rail][slot] = inFlightBytes[rail];
        count[rail]++;
        inFlightBytes[rail] += lengthBytes;
    }

    /** The oldest message placed on {@code rail} left it (discarded by the receiver): no rate. */
    void left(int rail) {
        pop(rail);
    }

    /**
     * The oldest message placed on {@code rail} completed after {@code elapsedNs}.
     *
     * @param failed    rails failed so far
     * @param splitting whether the connection splits large messages itself: then their stripes fed the
     *                  policy, and the elapsed time, which also holds the RTS &rarr; CTS round trip on the
     *                  RTS's rail, would pull the weights towards even (seen as ~68:32 on 4:1 rails)
     * @return whether the policy got a feedback round (new weights to record)
     */
    boolean completed(int rail, long elapsedNs, long failed, boolean splitting) {
        int slot = pop(rail);
        if (slot < 0 || splitting || elapsedNs <= 0) {
            return false;
        }
        long length = placedLength[rail][slot];
        if (length < switchoverThresholdBytes) {
            return false;
        }
        rateBytesPerNs[rail] = (double) (placedBacklog[rail][slot] + length) / elapsedNs;
        freshRates |= 1L << rail;
        long active = RailMask.all(railCount) & ~failed;
        if ((freshRates & active) != active || RailMask.count(active) < 2) {
            return false;
        }
        freshRates = 0;
        double before = striping.share(0);
        striping.onMessageCompleted(round.of(active));
        if (striping.share(0) != before) {
            // new weights: deficits counted under the old ones no longer apply
            Arrays.fill(assignedBytes, 0);
        }
        return true;
    }

    private int pop(int rail) {
        if (count[rail] == 0) {
            return -1;
        }
        int slot = head[rail];
        head[rail] = (slot + 1) % placedLength[rail].length;
        count[rail]--;
        inFlightBytes[rail] -= placedLength[rail][slot];
        return slot;
    }

    private void grow(int rail) {
        int n = placedLength[rail].length;
        long[] len = new long[n * 2];
        long[] backlog = new long[n * 2];
        for (int i = 0; i < n; i++) {
            len[i] = placedLength[rail][(head[rail] + i) % n];
            backlog[i] = placedBacklog[rail][(head[rail] + i) % n];
        }
        placedLength[rail] = len;
        placedBacklog[rail] = backlog;
        head[rail] = 0;
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
}
