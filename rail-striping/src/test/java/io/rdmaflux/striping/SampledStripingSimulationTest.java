package io.rdmaflux.striping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Seed 004 §II-B/§III-C in virtual time: sampled split on rails of different latency and bandwidth. */
class SampledStripingSimulationTest {
    static final long MB = 1_000_000L;
    static final long MIB = 1 << 20;

    /** Measures one transfer of {@code size} bytes on a fresh, idle link: the start-up sampling. */
    static long probe(long rate, long latencyNs, long size) {
        VirtualTimeLoop loop = new VirtualTimeLoop();
        SimLink link = new SimLink(loop, "probe", rate, latencyNs, 64 * 1024);
        long[] acked = new long[1];
        link.transmit(Math.max(64, size), () -> { }, () -> acked[0] = loop.nowNs());
        loop.runToIdle(Long.MAX_VALUE / 2);
        return acked[0];
    }

    private record Run(long[] finishNs, long[] stripeBytes) {
    }

    /** Sends one 4 MiB message and returns when each rail's stripe completed (relative to the post). */
    private static Run oneMessage(StripingPolicy.Factory policy, long[] rates, long[] latencies, long... busyOnRail0) {
        VirtualTimeLoop loop = new VirtualTimeLoop();
        SimLink[] links = new SimLink[rates.length];
        for (int i = 0; i < rates.length; i++) {
            links[i] = new SimLink(loop, "rail" + i, rates[i], latencies[i], 64 * 1024);
        }
        long[] finish = new long[rates.length];
        long[] bytes = new long[rates.length];
        RailsSpec spec = RailsSpec.rails(rates.length).striping(policy).switchoverThresholdBytes(4 * MIB)
            .multiplexing(MultiplexingPolicies.binding(0));
        List<CommunicationScheduler<String>> holder = new ArrayList<>();
        CommunicationScheduler<String> scheduler = new CommunicationScheduler<>(spec, s -> {
            int rail = s.rail();
            long id = s.stripeId();
            boolean measured = s.psn() == busyOnRail0.length;
            if (measured) {
                bytes[rail] = s.lengthBytes();
            }
            links[rail].transmit(Math.max(64, s.lengthBytes()), () -> { }, () -> {
                if (measured) {
                    finish[rail] = loop.nowNs();
                }
                holder.get(0).onStripeCompleted(rail, id, loop.nowNs());
            });
        });
        holder.add(scheduler);
        // messages below the threshold keep rail 0 busy, so "time until idle" matters
        for (long busy : busyOnRail0) {
            scheduler.send("busy", busy, 0);
        }
        scheduler.send("4MiB", 4 * MIB, 0);
        assertTrue(loop.runToIdle(10_000_000_000L));
        return new Run(finish, bytes);
    }

    private static double spread(long[] finishNs, long[] bytes) {
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < finishNs.length; i++) {
            if (bytes[i] > 0) {
                min = Math.min(min, finishNs[i]);
                max = Math.max(max, finishNs[i]);
            }
        }
        return (double) (max - min) / max;
    }

    @Test
    void allChunksOfA4MiBMessageFinishWithin2PercentOnHeterogeneousRails() {
        long[] rates = {1_170 * MB, 837 * MB, 300 * MB};
        long[] latencies = {3_000, 40_000, 10_000};
        TransferTimeModel[] models = new TransferTimeModel[rates.length];
        for (int i = 0; i < rates.length; i++) {
            int rail = i;
            models[i] = TransferTimeModel.sample(6, 24, size -> probe(rates[rail], latencies[rail], size));
        }
        Run sampled = oneMessage(StripingPolicies.sampled(models), rates, latencies);
        double spread = spread(sampled.finishNs(), sampled.stripeBytes());
        assertTrue(spread <= 0.02, "sampled chunks finished " + (spread * 100) + "% apart: "
            + java.util.Arrays.toString(sampled.finishNs()) + " for " + java.util.Arrays.toString(sampled.stripeBytes()));
        // the same message split evenly (seed 004's iso-split) is far apart: the test can fail
        Run even = oneMessage(StripingPolicies.even(), rates, latencies);
        assertTrue(spread(even.finishNs(), even.stripeBytes()) > 0.3);
        System.out.println("sampled: spread " + (spread * 100) + "% finish " + java.util.Arrays.toString(sampled.finishNs())
            + " bytes " + java.util.Arrays.toString(sampled.stripeBytes()));
    }

    @Test
    void timeUntilIdleIsAddedAndARailThatWouldFinishLaterIsLeftOut() {
        long[] rates = {1_000 * MB, 1_000 * MB};
        long[] latencies = {2_000, 2_000};
        TransferTimeModel[] models = {TransferTimeModel.nominal(rates[0], latencies[0]), TransferTimeModel.nominal(rates[1], latencies[1])};
        // rail 0 busy with 2 MiB: the 4 MiB message goes mostly to rail 1 and both still end together
        Run busy = oneMessage(StripingPolicies.sampled(0.0, models), rates, latencies, 2 * MIB);
        assertTrue(busy.stripeBytes()[1] > busy.stripeBytes()[0] + MIB, java.util.Arrays.toString(busy.stripeBytes()));
        assertTrue(spread(busy.finishNs(), busy.stripeBytes()) <= 0.02, java.util.Arrays.toString(busy.finishNs()));
        // rail 0 busy with 6 MiB: rail 1 alone finishes 4 MiB first, rail 0 gets nothing (seed 004 Fig. 2)
        Run dropped = oneMessage(StripingPolicies.sampled(0.0, models), rates, latencies, 2 * MIB, 2 * MIB, 2 * MIB);
        assertEquals(0, dropped.stripeBytes()[0]);
        assertEquals(4 * MIB, dropped.stripeBytes()[1]);
    }

    @Test
    void liveCompletionsCorrectAWrongStartUpModel() {
        long rate = 500 * MB;
        // the model believes rail 1 is as fast as rail 0; live completions must teach it otherwise
        TransferTimeModel fast = TransferTimeModel.nominal(1_000 * MB, 2_000);
        VirtualTimeLoop loop = new VirtualTimeLoop();
        SimLink[] links = {new SimLink(loop, "a", 1_000 * MB, 2_000, 64 * 1024), new SimLink(loop, "b", rate, 2_000, 64 * 1024)};
        RailsSpec spec = RailsSpec.rails(2).striping(StripingPolicies.sampled(0.5, fast, fast)).switchoverThresholdBytes(0)
            .maxInFlightMessages(1);
        SimSender s = new SimSender(loop, spec, links, 20, i -> 4 * MIB);
        s.pump();
        assertTrue(loop.runToIdle(10_000_000_000L));
        assertEquals(2.0 / 3, s.share(0), 0.02);
    }
}
