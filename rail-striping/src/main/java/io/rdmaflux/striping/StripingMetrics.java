package io.rdmaflux.striping;

import java.util.Arrays;
import java.util.List;

/**
 * A point-in-time snapshot of a virtual channel: per-rail bytes, messages and stripes, current
 * weights (share of a striped message's bytes per rail), out-of-order completions, re-sent
 * stripes, and the time series of weights for plotting (seed 000 Fig. 20 shows the same quantity
 * over time). Given by {@link CommunicationScheduler#metrics()}, the {@link Rails} operators'
 * {@link RailAttributes#METRICS} and, for a reactive-core connection,
 * {@link io.rdmaflux.striping.connection.RailsChannelFactory#metrics}.
 *
 * @param railBytes             payload bytes completed per rail
 * @param railMessages          messages completed per rail: a message counts once on every rail
 *                              that carried bytes of it (a message striped over 2 rails counts
 *                              on both, so the sum over rails is at least {@code messagesCompleted})
 * @param railStripesCompleted  stripes (or whole multiplexed messages) completed per rail
 * @param railStripesPosted     stripes posted per rail, re-sent ones included
 * @param railUp                false once a rail failed
 * @param weights               current share per rail, in [0, 1]
 * @param messagesCompleted     messages released by the completion filter
 * @param outOfOrderCompletions messages whose last stripe completed while an earlier PSN was
 *                              still outstanding
 * @param resentStripes         stripes re-posted after a rail failure
 * @param weightHistory         weight samples, oldest first, bounded by
 *                              {@link RailsSpec#weightHistoryCapacity()}: the initial weights
 *                              stamped with the channel's clock when it first sent (empty before),
 *                              then one sample per weight update
 */
public record StripingMetrics(String multiplexingPolicy, String stripingPolicy, long[] railBytes,
                              long[] railMessages, long[] railStripesCompleted, long[] railStripesPosted, boolean[] railUp,
                              double[] weights, long messagesCompleted, long outOfOrderCompletions,
                              long resentStripes, List<WeightSample> weightHistory) {

    /** Weights at one instant: {@code timeNs} on the channel's clock, one share per rail. */
    public record WeightSample(long timeNs, double[] shares) {
        @Override
        public String toString() {
            return timeNs + "ns " + Arrays.toString(shares);
        }
    }

    /** Number of rails. */
    public int railCount() {
        return railBytes.length;
    }

    /** Bytes completed over all rails. */
    public long totalBytes() {
        long sum = 0;
        for (long b : railBytes) {
            sum += b;
        }
        return sum;
    }

    @Override
    public String toString() {
        return "StripingMetrics{" + multiplexingPolicy + "/" + stripingPolicy + ", bytes=" + Arrays.toString(railBytes)
            + ", messages=" + Arrays.toString(railMessages) + ", stripes=" + Arrays.toString(railStripesCompleted) + ", up=" + Arrays.toString(railUp)
            + ", weights=" + Arrays.toString(weights) + ", messages=" + messagesCompleted
            + ", outOfOrder=" + outOfOrderCompletions + ", resent=" + resentStripes
            + ", history=" + weightHistory.size() + " samples}";
    }
}
