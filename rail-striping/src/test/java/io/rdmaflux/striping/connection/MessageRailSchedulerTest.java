package io.rdmaflux.striping.connection;

import static io.rdmaflux.striping.TestSubchannels.subchannel;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.striping.ForwardingStripingPolicy;
import io.rdmaflux.striping.StripingMetrics;
import io.rdmaflux.striping.StripingPolicies;
import io.rdmaflux.striping.StripingPolicy;
import java.util.List;
import java.util.PriorityQueue;
import org.junit.jupiter.api.Test;

/**
 * The connection-side striping hooks ({@code stripe}, {@code onStripeCompleted}) driven directly:
 * rail 0 at 1 GB/s, rail 1 at 250 MB/s.
 */
class MessageRailSchedulerTest {


    @Test
    void adaptiveStartsFromTheRailsAdvertisedRatesBeforeTheFirstMessage() {
        Subchannel[] subs = {subchannel(0, 96L << 20), subchannel(1, 24L << 20)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.adaptive().create(List.of(subs));
        assertEquals(0.8, s.share(0), 1e-9);
        assertEquals(0.2, s.share(1), 1e-9);
        long[] out = new long[2];
        s.stripe(0, 1 << 20, subs, 0, out);
        assertEquals(0.8, (double) out[0] / (1 << 20), 0.01, "the first striped message is split by the advertised rates");
    }

    @Test
    void adaptiveStartsEvenWhenARailAdvertisesNoRateAndUserWeightsWinOverRates() {
        MessageRailScheduler unshaped = (MessageRailScheduler) RailsChannelFactory.adaptive()
            .create(List.of(subchannel(0, 96L << 20), subchannel(1)));
        assertEquals(0.5, unshaped.share(0), 1e-9);
        MessageRailScheduler user = (MessageRailScheduler) RailsChannelFactory.of(spec -> spec.striping(
                StripingPolicies.adaptive(0.5, 0.0, 1, 3)))
            .create(List.of(subchannel(0, 96L << 20), subchannel(1, 24L << 20)));
        assertEquals(0.25, user.share(0), 1e-9);
        MessageRailScheduler even = (MessageRailScheduler) RailsChannelFactory.even()
            .create(List.of(subchannel(0, 96L << 20), subchannel(1, 24L << 20)));
        assertEquals(0.5, even.share(0), 1e-9);
    }

    @Test
    void adaptiveStripesOfConnectionMessagesConvergeTo4To1() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.of(spec -> spec.striping(StripingPolicies.adaptive())
            .stripeGranuleBytes(1)).create(List.of(subs));
        int length = 1 << 20;
        long now = 0;
        for (int psn = 0; psn < 10; psn++) {
            long[] out = new long[2];
            s.stripe(psn, length, subs, now, out);
            assertEquals(length, out[0] + out[1]);
            // stripes posted together, each finishing after its bytes at its rail's rate
            long t0 = now + out[0];
            long t1 = now + out[1] * 4;
            s.onStripeCompleted(subs[0], psn, 0, out[0], now, t0);
            s.onStripeCompleted(subs[1], psn, out[0], out[1], now, t1);
            now = Math.max(t0, t1);
        }
        assertEquals(0.8, s.share(0), 0.01);
        // once the connection stripes, large messages' RTSs are placed by the multiplexing policy
        assertTrue(s.select(10, length, subs) >= 0);
        assertEquals(1 << 20, s.stripeThresholdBytes() * 16);
    }

    @Test
    void messageElapsedTimeWithTheRendezvousWaitDoesNotPullStripedWeightsTowardsEven() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.of(spec -> spec.striping(StripingPolicies.adaptive())
            .stripeGranuleBytes(1)).create(List.of(subs));
        int length = 1 << 20;
        long rendezvousWaitNs = 2_000_000; // RTS -> CTS round trip, the same whichever rail is faster
        long now = 0;
        for (int psn = 0; psn < 20; psn++) {
            // the connection's order: select places the RTS, stripe splits the data, the stripes
            // complete, then the message completes once on the RTS's rail
            int rtsRail = s.select(psn, length, subs);
            long dataStart = now + rendezvousWaitNs;
            long[] out = new long[2];
            s.stripe(psn, length, subs, dataStart, out);
            long t0 = dataStart + out[0];
            long t1 = dataStart + out[1] * 4;
            s.onStripeCompleted(subs[0], psn, 0, out[0], dataStart, t0);
            s.onStripeCompleted(subs[1], psn, out[0], out[1], dataStart, t1);
            long done = Math.max(t0, t1);
            s.onMessageCompleted(subs[rtsRail], psn, length, done - now);
            now = done;
        }
        assertEquals(0.8, s.share(0), 0.01);
    }

    /**
     * The connection's order of calls for a small message (DATA frames), a striped one and a small
     * one that completes before it: bytes, messages and stripes land on the rails that carried them,
     * the small message that overtook the striped one is an out-of-order completion, and the weight
     * history starts at the first stripe's node time, not at 0.
     */
    @Test
    void metricsCountBytesMessagesAndStripesPerRailAsTheConnectionReportsThem() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.even().create(List.of(subs));
        int length = 1 << 20;
        int small = s.select(0, 100, subs);
        s.onMessageCompleted(subs[small], 0, 100, 500);
        int rts = s.select(1, length, subs);
        long[] split = new long[2];
        s.stripe(1, length, subs, 7_000_000_000L, split);
        assertArrayEquals(new long[] {length / 2, length / 2}, split);
        int overtaking = s.select(2, 300, subs);
        s.onMessageCompleted(subs[overtaking], 2, 300, 100);
        s.onStripeCompleted(subs[0], 1, 0, split[0], 7_000_000_000L, 7_000_600_000L);
        s.onStripeCompleted(subs[1], 1, split[0], split[1], 7_000_000_000L, 7_000_900_000L);
        s.onMessageCompleted(subs[rts], 1, length, 950_000);

        StripingMetrics m = s.metrics();
        long[] bytes = {length / 2, length / 2};
        long[] messages = {1, 1};
        long[] stripes = {1, 1};
        bytes[small] += 100;
        bytes[overtaking] += 300;
        messages[small]++;
        messages[overtaking]++;
        stripes[small]++;
        stripes[overtaking]++;
        assertArrayEquals(bytes, m.railBytes());
        assertArrayEquals(messages, m.railMessages(), "the striped message counts once on each rail");
        assertArrayEquals(stripes, m.railStripesCompleted());
        assertArrayEquals(stripes, m.railStripesPosted());
        assertEquals(3, m.messagesCompleted());
        assertEquals(1, m.outOfOrderCompletions(), "PSN 2 completed while PSN 1 was outstanding");
        assertArrayEquals(new double[] {0.5, 0.5}, m.weights());
        assertArrayEquals(new boolean[] {true, true}, m.railUp());
        List<StripingMetrics.WeightSample> h = m.weightHistory();
        assertEquals(2, h.size(), h.toString());
        assertEquals(7_000_000_000L, h.get(0).timeNs(), "initial weights at the first stripe's node time");
        assertEquals(7_000_900_000L, h.get(1).timeNs(), "one sample when the striped message completed");
        assertTrue(m.stripingPolicy().contains("even"), m.stripingPolicy());
        s.onSubchannelFailed(subs[1]);
        m = s.metrics();
        assertArrayEquals(new boolean[] {true, false}, m.railUp());
        assertEquals(3, m.weightHistory().size(), "the failure changed the weights");
        assertEquals(0.0, m.weightHistory().get(2).shares()[1]);
    }

    @Test
    void outOfOrderCompletionsAreCountedOverAnyNumberOfMessagesInFlight() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.even().create(List.of(subs));
        int[] rail = new int[300];
        for (int psn = 0; psn < 300; psn++) {
            rail[psn] = s.select(psn, 100, subs);
        }
        // 299 .. 1 overtake 0, then 0 completes: every later PSN was out of order, the window drains
        for (int psn = 299; psn >= 0; psn--) {
            s.onMessageCompleted(subs[rail[psn]], psn, 100, 10);
        }
        assertEquals(299, s.metrics().outOfOrderCompletions());
        for (int psn = 300; psn < 310; psn++) {
            s.onMessageCompleted(subs[s.select(psn, 100, subs)], psn, 100, 10);
        }
        assertEquals(299, s.metrics().outOfOrderCompletions(), "in order again after PSN 0 completed");
        assertEquals(310, s.metrics().messagesCompleted());
        assertEquals(310, s.metrics().railMessages()[0] + s.metrics().railMessages()[1]);
    }

    @Test
    void aFailedSubchannelGetsNoStripe() {
        Subchannel[] subs = {subchannel(0), subchannel(1), subchannel(2)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.even().create(List.of(subs));
        s.onSubchannelFailed(subs[1]);
        long[] out = new long[3];
        s.stripe(0, 3 << 20, subs, 0, out);
        assertEquals(0, out[1]);
        assertEquals(3 << 20, out[0] + out[2]);
        for (int i = 0; i < 20; i++) {
            int rail = s.select(i, 100, subs);
            assertTrue(rail == 0 || rail == 2, "rail " + rail);
        }
    }

    @Test
    void adaptiveTopsEachRailUpToACommonFinishTimeGivenItsOutstandingStripes() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.adaptive().create(List.of(subs));
        int length = 1 << 20;
        long[] first = new long[2];
        s.stripe(0, length, subs, 0, first);
        assertEquals(length / 2, first[0], "no backlog, no feedback yet: the even start");
        // rail 0 delivered its half, rail 1 still owes 512 KiB (the message is not complete: weights unchanged)
        s.onStripeCompleted(subs[0], 0, 0, first[0], 0, 1_000);
        long[] next = new long[2];
        s.stripe(1, length, subs, 1_000, next);
        // level T: (1 MiB + 512 KiB) / (0.5 + 0.5); rail 0: 0.5 T = 768 KiB, rail 1: 0.5 T - 512 KiB = 256 KiB
        assertEquals(768 << 10, next[0]);
        assertEquals(256 << 10, next[1]);
        // rail 0 delivered again: a rail whose backlog alone outlasts the new message gets none of it
        s.onStripeCompleted(subs[0], 1, 0, next[0], 1_000, 2_000);
        long[] third = new long[2];
        s.stripe(2, 64 << 10, subs, 2_000, third);
        assertEquals(64 << 10, third[0]);
        assertEquals(0, third[1]);
    }

    @Test
    void theRtsOfALargeMessageGoesOnTheRailWhoseStripesDrainFirst() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.adaptive().create(List.of(subs));
        int length = 1 << 20;
        long[] split = new long[2];
        s.stripe(0, length, subs, 0, split);
        s.stripe(1, length, subs, 0, split);
        // both rails owe 1 MiB; rail 0 delivers its stripe of message 0: rail 1 now drains last
        s.onStripeCompleted(subs[0], 0, 0, length / 2, 0, 1_000);
        for (int psn = 2; psn < 6; psn++) {
            assertEquals(0, s.select(psn, length, subs), "RTS of PSN " + psn);
        }
        s.onStripeCompleted(subs[1], 0, length / 2, length / 2, 0, 4_000);
        s.onStripeCompleted(subs[1], 1, length / 2, length / 2, 0, 8_000);
        // rail 1 drained, rail 0 still owes message 1's half
        assertEquals(1, s.select(6, length, subs));
        // small messages stay with the multiplexing policy
        int a = s.select(7, 100, subs);
        int b = s.select(8, 100, subs);
        assertTrue(a != b, "round robin for small messages: " + a + ", " + b);
    }

    @Test
    void staticPoliciesKeepTheirSplitWhateverTheBacklog() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        for (RailsChannelFactory f : List.of(RailsChannelFactory.even(), RailsChannelFactory.weighted(4, 1))) {
            MessageRailScheduler s = (MessageRailScheduler) f.create(List.of(subs));
            long[] a = new long[2];
            s.stripe(0, 1 << 20, subs, 0, a);
            s.onStripeCompleted(subs[0], 0, 0, a[0], 0, 1_000);
            long[] b = new long[2];
            s.stripe(1, 1 << 20, subs, 1_000, b);
            assertEquals(a[0], b[0], f.toString());
            assertEquals(a[1], b[1], f.toString());
        }
    }

    /**
     * 200 × 1 MiB over 1 GB/s + 250 MB/s rails with 16 messages in flight (each rail a FIFO, a new
     * message split when one completes), adaptive from equal weights: the first 16 messages are split
     * evenly before any feedback, which queues 8 MiB on the slow rail. Topping up to a common finish
     * time drains that backlog (makespan 1.000 of the ideal); the same policy splitting by its
     * weights alone leaves the fast rail idle while the window waits on the slow one (1.128).
     */
    @Test
    void toppingUpDrainsTheBacklogOfTheEvenStartWithManyMessagesInFlight() {
        double ideal = 200.0 * (1 << 20) / 1.25;
        double topped = makespanNs(StripingPolicies.adaptive());
        StripingPolicy.Factory byWeightsAlone = (rails, granule) -> new WeightsAlone(StripingPolicies.adaptive().create(rails, granule));
        double alone = makespanNs(byWeightsAlone);
        // measured: 1.0000 and 1.1275 of the ideal (all bytes at the aggregate rate)
        assertTrue(topped <= 1.01 * ideal, "topped up: " + topped / ideal + " x the ideal");
        assertTrue(alone >= 1.10 * ideal, "weights alone: " + alone / ideal + " x the ideal");
    }

    /** Virtual-time run: rails 0 and 1 serve 1.0 and 0.25 bytes/ns in FIFO order; returns the makespan, ns. */
    private static double makespanNs(StripingPolicy.Factory policy) {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.of(spec -> spec.striping(policy)).create(List.of(subs));
        double[] rate = {1.0, 0.25};
        long[] busyUntil = new long[2];
        int length = 1 << 20;
        int messages = 200;
        int[] stripesLeft = new int[messages];
        // events: completion time, rail, psn, offset, bytes, posted
        PriorityQueue<long[]> done = new PriorityQueue<>((x, y) -> Long.compare(x[0], y[0]));
        int posted = 0;
        long now = 0;
        long end = 0;
        while (true) {
            while (posted < messages && posted - completedBefore(stripesLeft, posted) < 16) {
                long[] split = new long[2];
                s.stripe(posted, length, subs, now, split);
                long offset = 0;
                for (int rail = 0; rail < 2; rail++) {
                    if (split[rail] > 0) {
                        long finish = Math.max(now, busyUntil[rail]) + (long) Math.ceil(split[rail] / rate[rail]);
                        busyUntil[rail] = finish;
                        done.add(new long[] {finish, rail, posted, offset, split[rail], now});
                        stripesLeft[posted]++;
                    }
                    offset += split[rail];
                }
                posted++;
            }
            long[] e = done.poll();
            if (e == null) {
                break;
            }
            now = e[0];
            s.onStripeCompleted(subs[(int) e[1]], (int) e[2], e[3], e[4], e[5], now);
            if (--stripesLeft[(int) e[2]] == 0) {
                stripesLeft[(int) e[2]] = -1;
                end = now;
            }
        }
        return end;
    }

    private static int completedBefore(int[] stripesLeft, int posted) {
        int n = 0;
        for (int i = 0; i < posted; i++) {
            if (stripesLeft[i] < 0) {
                n++;
            }
        }
        return n;
    }

    /** The adaptive policy, except that it does not say its split follows rates: the scheduler adds its split on top of any backlog. */
    private static final class WeightsAlone extends ForwardingStripingPolicy {
        WeightsAlone(StripingPolicy adaptive) {
            super(adaptive);
        }

        @Override
        public boolean splitsByRate() {
            return false;
        }

        @Override
        public String name() {
            return "weights-alone " + super.name();
        }
    }
}
