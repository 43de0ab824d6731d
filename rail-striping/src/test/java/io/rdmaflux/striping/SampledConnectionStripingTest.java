package io.rdmaflux.striping;

import static io.rdmaflux.striping.TestSubchannels.subchannel;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.striping.connection.RailsChannelFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Sampled striping (seed 004) on the connection path: the {@link SubchannelScheduler} hooks
 * ({@code select}, {@code stripe}, {@code onStripeCompleted}, {@code onMessageCompleted}) driven
 * the way reactive-core's rendezvous path calls them, in virtual time, over three heterogeneous
 * {@link SimLink} rails (FIFO, pipelined, as an RC queue pair posts WRITEs back to back) with 16
 * messages of 1 MiB in flight: every rail always has stripes queued.
 */
class SampledConnectionStripingTest {
    static final long MB = 1_000_000L;
    static final int SIZE = 1 << 20;
    static final int MESSAGES = 200;
    static final int IN_FLIGHT = 16;
    static final long[] RATES = {1_170 * MB, 837 * MB, 300 * MB};
    static final long[] LATENCIES = {3_000, 40_000, 10_000};

    /** What the policy was told about one stripe, and what the simulated rail knew at the time. */
    record Feedback(int rail, boolean idleAtPost, int outstanding, boolean trulyIdleAtPost, int trulyOutstanding) {
    }

    /** A policy that records its per-stripe feedback and passes everything to sampled striping. */
    static final class Recording extends ForwardingStripingPolicy {
        final SampledStriping sampled;
        final List<Feedback> told = new ArrayList<>();
        Feedback truth;

        Recording(SampledStriping sampled) {
            super(sampled);
            this.sampled = sampled;
        }

        @Override
        public void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs, boolean idle, int outstanding) {
            told.add(new Feedback(rail, idle, outstanding, truth.trulyIdleAtPost(), truth.trulyOutstanding()));
            super.onStripeCompleted(rail, lengthBytes, postedNs, completedNs, idle, outstanding);
        }
    }


    /** Isolated transfer time of {@code size} bytes on {@code rail}: what an idle rail takes. */
    private static long trueTransferNs(int rail, long size) {
        return SampledStripingSimulationTest.probe(RATES[rail], LATENCIES[rail], size);
    }

    private record Run(Recording policy, double[] spread) {
    }

    /**
     * 200 messages, 16 in flight, a new one split and posted whenever one completes; per message, how
     * far apart its first and last stripe completed, as a fraction of the message's time from its split.
     */
    private static Run run() {
        int rails = RATES.length;
        TransferTimeModel[] models = new TransferTimeModel[rails];
        for (int i = 0; i < rails; i++) {
            int rail = i;
            models[i] = TransferTimeModel.sample(6, 24, size -> trueTransferNs(rail, size));
        }
        Recording[] policy = new Recording[1];
        StripingPolicy.Factory factory = (railCount, granule) -> {
            policy[0] = new Recording((SampledStriping) StripingPolicies.sampled(models).create(railCount, granule));
            return policy[0];
        };
        Subchannel[] subs = new Subchannel[rails];
        for (int i = 0; i < rails; i++) {
            subs[i] = subchannel(i);
        }
        RailsChannelFactory channels = RailsChannelFactory.of(spec -> spec.striping(factory));
        SubchannelScheduler s = channels.create(List.of(subs));
        VirtualTimeLoop loop = new VirtualTimeLoop();
        SimLink[] links = new SimLink[rails];
        for (int i = 0; i < rails; i++) {
            links[i] = new SimLink(loop, "rail" + i, RATES[i], LATENCIES[i], 64 * 1024);
        }
        int[] outstanding = new int[rails];
        double[] spread = new double[MESSAGES];
        int[] next = {0};
        Runnable[] start = new Runnable[1];
        start[0] = () -> {
            int psn = next[0]++;
            long splitNs = loop.nowNs();
            int rtsRail = s.select(psn, SIZE, subs);
            long[] split = new long[rails];
            s.stripe(psn, SIZE, subs, splitNs, split);
            long[] finish = new long[rails];
            int[] left = {0};
            long offset = 0;
            for (int i = 0; i < rails; i++) {
                if (split[i] == 0) {
                    continue;
                }
                int rail = i;
                long at = offset;
                long bytes = split[i];
                boolean idle = outstanding[rail] == 0;
                outstanding[rail]++;
                left[0]++;
                links[rail].transmit(bytes, () -> { }, () -> {
                    outstanding[rail]--;
                    finish[rail] = loop.nowNs();
                    policy[0].truth = new Feedback(rail, false, 0, idle, outstanding[rail]);
                    s.onStripeCompleted(subs[rail], psn, at, bytes, splitNs, loop.nowNs());
                    if (--left[0] == 0) {
                        long first = Long.MAX_VALUE;
                        long last = 0;
                        for (int r = 0; r < rails; r++) {
                            if (split[r] > 0) {
                                first = Math.min(first, finish[r]);
                                last = Math.max(last, finish[r]);
                            }
                        }
                        spread[psn] = (double) (last - first) / (last - splitNs);
                        s.onMessageCompleted(subs[rtsRail], psn, SIZE, loop.nowNs() - splitNs);
                        if (next[0] < MESSAGES) {
                            start[0].run();
                        }
                    }
                });
                offset += bytes;
            }
        };
        for (int i = 0; i < IN_FLIGHT; i++) {
            start[0].run();
        }
        assertTrue(loop.runToIdle(60_000_000_000L));
        assertEquals(MESSAGES, next[0]);
        return new Run(policy[0], spread);
    }

    @Test
    void sampledStripingIsToldWhetherEachStripeQueuedAndHowManyRemainOnItsRail() {
        Run r = run();
        assertTrue(r.policy().told.size() > MESSAGES);
        long idle = 0;
        for (Feedback f : r.policy().told) {
            assertEquals(f.trulyIdleAtPost(), f.idleAtPost(), "idle at post: " + f);
            assertEquals(f.trulyOutstanding(), f.outstanding(), "outstanding on the rail: " + f);
            idle += f.idleAtPost() ? 1 : 0;
        }
        // with 16 messages in flight only the very first stripes find their rail idle
        assertTrue(idle <= RATES.length, idle + " stripes posted to an idle rail");
    }

    /** Measured: within 0.1 %; folding queued stripes in (as every stripe was before) put rail 0's 256 KiB at 1.48 x. */
    @Test
    void queueingDoesNotPolluteTheTransferTimeModels() {
        Run r = run();
        for (int rail = 0; rail < RATES.length; rail++) {
            for (long size : new long[] {64 << 10, 256 << 10, SIZE}) {
                double predicted = r.policy().sampled.predictNs(rail, size);
                double truth = trueTransferNs(rail, size);
                assertEquals(1.0, predicted / truth, 0.02, "rail " + rail + ", " + size + " bytes: model " + predicted
                    + " ns, the rail takes " + truth + " ns");
            }
        }
    }

    /**
     * Measured: median 0.22 %, worst 0.43 % of the message time. With every stripe reported as
     * posted to an idle rail with nothing left behind it (as before) the worst was 88 %; with true
     * feedback but a full round trip added per queued stripe to the time until idle, 94 %.
     */
    @Test
    void stripesOfOneMessageFinishCloseTogetherWithManyInFlight() {
        Run r = run();
        double[] sorted = r.spread().clone();
        Arrays.sort(sorted);
        double worst = sorted[sorted.length - 1];
        double median = sorted[sorted.length / 2];
        System.out.println("sampled, connection path, 16 in flight: stripe finish spread median " + median + ", worst " + worst);
        assertTrue(worst <= 0.05, "worst spread " + worst + " of the message time");
    }
}
