package io.rdmaflux.striping.connection;

import static io.rdmaflux.striping.TestSubchannels.subchannel;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingPolicies;
import io.rdmaflux.striping.TransferTimeModel;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The commit horizon of {@link MessageRailScheduler#stripeNow} in virtual time, as reactive-core's
 * rendezvous path uses it: granted messages are split when posted, and only while some rail would
 * drain its queued stripes within the horizon. Two FIFO rails of 31.25 MB/s (250 Mbit/s, the
 * two-namespace harness's equal rails), 1 MiB messages, 16 message buffers; rail 0 drops to a quarter
 * of its rate at 1 s (seed 000 Fig. 20's capacity change) and is restored at 3 s.
 */
class CommitHorizonTest {
    private static final double RATE = 0.03125;
    private static final long TICK_NS = 50_000;
    private static final long THROTTLE_NS = 1_000_000_000L;
    private static final long RESTORE_NS = 3_000_000_000L;
    private static final long END_NS = 4_500_000_000L;
    private static final long BIN_NS = 50_000_000L;


    @Test
    void aThrottledRailHoldsAHorizonOfWorkAndTheAggregateRecoversAtOnce() {
        Run gated = run(true);
        Run eager = run(false);
        double throttled = 1.25 * RATE * 1e9;
        // This model has no control-path delay (a freed buffer is granted and split at once), so splitting at the
        // CTS recovers too here; what the horizon changes is how much the slowed rail holds, which over the
        // two-namespace rails (RTS/CTS round trips, TCP socket buffers) held every buffer for 0.5-0.7 s.
        long gatedRecovery = gated.recoveryNs(THROTTLE_NS, RESTORE_NS, throttled);
        long eagerRecovery = eager.recoveryNs(THROTTLE_NS, RESTORE_NS, throttled);
        assertTrue(gatedRecovery <= 150_000_000L, "with the horizon the aggregate recovered after " + gatedRecovery / 1e6 + " ms");
        // at the throttle rail 0 held about a horizon (20 ms) of work plus one stripe: under 1.5 MB, not half the window
        assertTrue(gated.backlogAtThrottle[0] <= 1_500_000, "rail 0 backlog at the throttle " + gated.backlogAtThrottle[0]);
        assertTrue(eager.backlogAtThrottle[0] >= 4_000_000, "eager rail 0 backlog at the throttle " + eager.backlogAtThrottle[0]);
        long gatedRestore = gated.recoveryNs(RESTORE_NS, END_NS - BIN_NS, 2 * RATE * 1e9);
        assertTrue(gatedRestore <= 500_000_000L, "after the restore: " + gatedRestore / 1e6 + " ms");
        System.out.printf("commit horizon: recovery after the throttle %.0f ms (eager %.0f ms), after the restore %.0f ms (eager %.0f ms); "
                + "rail 0 backlog at the throttle %d B (eager %d B)%n", gatedRecovery / 1e6, eagerRecovery / 1e6, gatedRestore / 1e6,
            eager.recoveryNs(RESTORE_NS, END_NS - BIN_NS, 2 * RATE * 1e9) / 1e6, gated.backlogAtThrottle[0], eager.backlogAtThrottle[0]);
    }

    @Test
    void theHorizonCostsNoBandwidthOnSteadyRails() {
        Run gated = run(true);
        Run eager = run(false);
        // before the throttle both carry the two rails' rate (the first 0.2 s are the even start)
        double gatedRate = gated.rate(200_000_000L, THROTTLE_NS);
        double eagerRate = eager.rate(200_000_000L, THROTTLE_NS);
        assertTrue(gatedRate >= 0.99 * 2 * RATE * 1e9, "gated " + gatedRate);
        assertTrue(gatedRate >= 0.99 * eagerRate, "gated " + gatedRate + " vs eager " + eagerRate);
    }

    @Test
    void stripeNowWaitsOnlyWhileEveryRailHasAHorizonQueued() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = scheduler(2_000_000L);
        assertTrue(s.stripeNow(0), "no rate measured yet: no reason to wait");
        long[] split = new long[2];
        // half a MiB per rail delivered in 10 ms (one rate window): 52.4 MB/s each; the horizon is 2 ms
        s.stripe(0, 1 << 20, subs, 0, split);
        s.onStripeCompleted(subs[0], 0, 0, split[0], 0, 10_000_000L);
        s.onStripeCompleted(subs[1], 0, split[0], split[1], 0, 10_000_000L);
        assertEquals(split[0] / 10e6 * 1e9, s.drainRateBytesPerSec(0), 1);
        for (int psn = 1; psn <= 7; psn++) {
            s.stripe(psn, 1 << 20, subs, 10_000_000L, split);
        }
        // 7 MiB queued, about 3.5 MiB per rail: 70 ms each, over the 2 ms horizon
        assertFalse(s.stripeNow(10_000_000L));
        s.onSubchannelFailed(subs[1]);
        assertFalse(s.stripeNow(10_000_000L), "rail 0 still has more than a horizon queued");
        s.onSubchannelFailed(subs[0]);
        assertTrue(s.stripeNow(10_000_000L), "no rail left to wait for: the connection decides");
    }

    /**
     * Sampled striping's share is the last split's: a rail it gave nothing then reports a share of 0 while
     * it sits idle. Rail 1 (a 50 ms one-way latency) gets no bytes of the first messages, which queue on
     * rail 0 well past the horizon; the idle rail 1 must still open the gate, so the next split can use it.
     */
    @Test
    void anIdleRailOpensTheGateEvenWhenTheLastSampledSplitGaveItNothing() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        TransferTimeModel fast = TransferTimeModel.nominal(1_000_000_000L, 1_000);
        TransferTimeModel distant = TransferTimeModel.nominal(1_000_000_000L, 50_000_000L);
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.of(spec -> spec
                .striping(StripingPolicies.sampled(fast, distant)).commitHorizonNs(2_000_000L))
            .create(List.of(subs));
        long[] split = new long[2];
        // one 1 MiB stripe on rail 0 delivered in 10 ms: a rate window measured (105 kB/ms), nothing on rail 1
        s.stripe(0, 1 << 20, subs, 0, split);
        assertArrayEquals(new long[] {1 << 20, 0}, split);
        s.onStripeCompleted(subs[0], 0, 0, split[0], 0, 10_000_000L);
        assertTrue(s.drainRateBytesPerSec(0) > 0);
        for (int psn = 1; psn <= 3; psn++) {
            s.stripe(psn, 1 << 20, subs, 10_000_000L, split);
            assertEquals(0, split[1], "rail 1's round trip outlasts rail 0's queue");
        }
        assertEquals(0.0, s.share(1), "the last split gave rail 1 nothing");
        // rail 0: 3 MiB queued, about 30 ms at its rate, far past the 2 ms horizon; rail 1 idle
        assertTrue(s.stripeNow(10_000_000L), "the idle rail 1 opens the gate");
        s.onSubchannelFailed(subs[1]);
        assertFalse(s.stripeNow(10_000_000L), "without rail 1, rail 0's queue past the horizon closes it");
    }

    @Test
    void aHorizonThatIsNotPositiveIsRefusedNamingTheValueAndTheFix() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RailsSpec.rails(2).commitHorizonNs(0));
        assertTrue(e.getMessage().contains("commitHorizonNs > 0 required but it was 0"), e.getMessage());
        assertTrue(e.getMessage().contains("20_000_000"), e.getMessage());
    }

    private static MessageRailScheduler scheduler(long horizonNs) {
        return (MessageRailScheduler) RailsChannelFactory.of(spec -> spec.striping(StripingPolicies.adaptive()).commitHorizonNs(horizonNs))
            .create(List.of(subchannel(0), subchannel(1)));
    }

    /**
     * Serves two FIFO rails in ticks of {@value #TICK_NS} ns; a message takes one of 16 buffers from its
     * split until its last stripe completed; {@code gated}: split only when {@code stripeNow} says so.
     */
    private static Run run(boolean gated) {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = scheduler(RailsSpec.DEFAULT_COMMIT_HORIZON_NS);
        List<ArrayDeque<long[]>> queues = List.of(new ArrayDeque<>(), new ArrayDeque<>());
        int[] stripesLeft = new int[100_000];
        long[] split = new long[2];
        Run r = new Run();
        int next = 0;
        int inFlight = 0;
        double[] credit = new double[2];
        for (long now = 0; now < END_NS; now += TICK_NS) {
            while (inFlight < 16 && (!gated || s.stripeNow(now))) {
                s.stripe(next, 1 << 20, subs, now, split);
                long offset = 0;
                for (int rail = 0; rail < 2; rail++) {
                    if (split[rail] > 0) {
                        // psn, offset, bytes, bytes left, posted
                        queues.get(rail).add(new long[] {next, offset, split[rail], split[rail], now});
                        stripesLeft[next]++;
                    }
                    offset += split[rail];
                }
                next++;
                inFlight++;
            }
            if (now == THROTTLE_NS) {
                for (int rail = 0; rail < 2; rail++) {
                    r.backlogAtThrottle[rail] = queues.get(rail).stream().mapToLong(q -> q[3]).sum();
                }
            }
            for (int rail = 0; rail < 2; rail++) {
                double rate = rail == 0 && now >= THROTTLE_NS && now < RESTORE_NS ? RATE / 4 : RATE;
                credit[rail] += rate * TICK_NS;
                ArrayDeque<long[]> q = queues.get(rail);
                while (!q.isEmpty() && credit[rail] >= 1) {
                    long[] head = q.peek();
                    long served = Math.min(head[3], (long) credit[rail]);
                    head[3] -= served;
                    credit[rail] -= served;
                    r.bins[(int) (now / BIN_NS)] += served;
                    if (head[3] == 0) {
                        q.poll();
                        s.onStripeCompleted(subs[rail], (int) head[0], head[1], head[2], head[4], now + TICK_NS);
                        if (--stripesLeft[(int) head[0]] == 0) {
                            inFlight--;
                        }
                    }
                }
                if (q.isEmpty()) {
                    credit[rail] = 0;
                }
            }
        }
        return r;
    }

    private static final class Run {
        final long[] bins = new long[(int) (END_NS / BIN_NS) + 1];
        final long[] backlogAtThrottle = new long[2];

        /**
         * Time after {@code changeNs} from which every bin until {@code untilNs} (the next change or the end)
         * carries at least 0.95 of {@code capacity} bytes/s, or {@code Long.MAX_VALUE} if none does.
         */
        long recoveryNs(long changeNs, long untilNs, double capacityBytesPerSec) {
            int first = (int) (changeNs / BIN_NS);
            int last = (int) (untilNs / BIN_NS);
            double need = 0.95 * capacityBytesPerSec * BIN_NS / 1e9;
            int b = last;
            while (b > first && bins[b - 1] >= need) {
                b--;
            }
            return b == last ? Long.MAX_VALUE : (long) b * BIN_NS - changeNs;
        }

        /** Bytes/s served between two times (multiples of the bin). */
        double rate(long fromNs, long toNs) {
            long bytes = 0;
            for (int b = (int) (fromNs / BIN_NS); b < (int) (toNs / BIN_NS); b++) {
                bytes += bins[b];
            }
            return bytes / ((toNs - fromNs) / 1e9);
        }
    }
}
