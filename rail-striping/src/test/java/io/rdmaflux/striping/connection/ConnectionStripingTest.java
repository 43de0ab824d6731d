package io.rdmaflux.striping.connection;

import static io.rdmaflux.striping.TestSubchannels.subchannel;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.stripe.StripeEngine;
import io.rdmaflux.striping.StripingMetrics;
import io.rdmaflux.striping.StripingPolicies;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link MessageRailScheduler#stripePolicy()} driven by a {@link StripeEngine} the way reactive-core's
 * rendezvous path drives it (begin, split, post, complete; the message then completes on the RTS's rail):
 * the scheduler's metrics, top-up, RTS placement and commit horizon read the engine's accounting.
 */
class ConnectionStripingTest {
    private final Subchannel[] subs = {subchannel(0), subchannel(1)};

    @Test
    void metricsFromTheEngineMatchTheHooks() {
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.even().create(List.of(subs));
        StripeEngine engine = new StripeEngine(2, 4, s.stripePolicy());
        int length = 1 << 20;
        int small = s.select(0, 100, subs);
        s.onMessageCompleted(subs[small], 0, 100, 500);
        int rts = s.select(1, length, subs);
        engine.begin(0, 1, length);
        assertEquals(2, engine.split(0, 0b11, 7_000_000_000L));
        engine.post(0, 0, 0, 7_000_000_000L);
        engine.post(0, 1, 1, 7_000_000_000L);
        int overtaking = s.select(2, 300, subs);
        s.onMessageCompleted(subs[overtaking], 2, 300, 100);
        engine.complete(0, 0, 7_000_600_000L);
        assertEquals(StripeEngine.MESSAGE, engine.complete(0, 1, 7_000_900_000L));
        s.onMessageCompleted(subs[rts], 1, length, 950_000);

        StripingMetrics m = s.metrics();
        long[] bytes = {length / 2, length / 2};
        long[] once = {1, 1};
        bytes[small] += 100;
        bytes[overtaking] += 300;
        once[small]++;
        once[overtaking]++;
        assertArrayEquals(bytes, m.railBytes());
        assertArrayEquals(once, m.railMessages(), "the striped message counts once on each rail");
        assertArrayEquals(once, m.railStripesCompleted());
        assertArrayEquals(once, m.railStripesPosted());
        assertEquals(3, m.messagesCompleted());
        assertEquals(1, m.outOfOrderCompletions());
        assertEquals(2, m.weightHistory().size());
        assertEquals(7_000_000_000L, m.weightHistory().get(0).timeNs());
        assertEquals(7_000_900_000L, m.weightHistory().get(1).timeNs());
    }

    /** A rendezvous message below the stripe threshold is written whole: it counts as posted, queued and carried. */
    @Test
    void aWholeWriteCountsInTheBacklogAndOnceAsAMessage() {
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.adaptive().create(List.of(subs));
        StripeEngine engine = new StripeEngine(2, 4, s.stripePolicy());
        int rail = s.select(0, 4096, subs);
        engine.begin(0, 0, 4096);
        engine.whole(0, rail);
        engine.post(0, rail, rail, 1_000);
        assertEquals(4096, engine.backlogBytes(rail));
        engine.complete(0, rail, 2_000);
        s.onMessageCompleted(subs[rail], 0, 4096, 1_000);
        StripingMetrics m = s.metrics();
        assertEquals(1, m.railStripesPosted()[rail], "placed once, by select");
        assertEquals(1, m.railStripesCompleted()[rail]);
        assertEquals(4096, m.railBytes()[rail]);
        assertEquals(1, m.railMessages()[rail], "counted once, by the engine");
        assertEquals(1, m.messagesCompleted());
    }

    /** The top-up and the RTS placement read the backlog of the engine that posts the stripes. */
    @Test
    void theTopUpAndTheRtsFollowTheEnginesBacklog() {
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.adaptive().create(List.of(subs));
        StripeEngine engine = new StripeEngine(2, 4, s.stripePolicy());
        int length = 1 << 20;
        engine.begin(0, 0, length);
        engine.split(0, 0b11, 0);
        assertEquals(length / 2, engine.stripeBytes(0, 0), "the even start");
        engine.post(0, 0, 0, 0);
        engine.post(0, 1, 1, 0);
        engine.complete(0, 0, 1_000);
        assertEquals(0, s.select(1, length, subs), "the RTS goes where the backlog drains first");
        engine.begin(1, 1, length);
        engine.split(1, 0b11, 1_000);
        assertEquals(768 << 10, engine.stripeBytes(1, 0));
        assertEquals(256 << 10, engine.stripeBytes(1, 1));
    }

    @Test
    void theCommitHorizonReadsTheEnginesBacklog() {
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.of(spec -> spec
            .striping(StripingPolicies.adaptive()).commitHorizonNs(2_000_000L)).create(List.of(subs));
        StripeEngine engine = new StripeEngine(2, 16, s.stripePolicy());
        engine.begin(0, 0, 1 << 20);
        engine.split(0, 0b11, 0);
        engine.post(0, 0, 0, 0);
        engine.post(0, 1, 1, 0);
        engine.complete(0, 0, 10_000_000L);
        engine.complete(0, 1, 10_000_000L);
        assertTrue(s.drainRateBytesPerSec(0) > 0);
        assertTrue(s.stripeNow(10_000_000L), "nothing queued");
        for (int e = 1; e <= 7; e++) {
            engine.begin(e, e, 1 << 20);
            engine.split(e, 0b11, 10_000_000L);
            engine.post(e, 0, 0, 10_000_000L);
            engine.post(e, 1, 1, 10_000_000L);
        }
        assertFalse(s.stripeNow(10_000_000L), "7 MiB queued in the engine, 70 ms at the measured rate");
    }

    @Test
    void aSchedulersPolicyServesOneEngine() {
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.even().create(List.of(subs));
        new StripeEngine(2, 4, s.stripePolicy());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new StripeEngine(2, 4, s.stripePolicy()));
        assertTrue(e.getMessage().contains("serves one stripe engine"), e.getMessage());
    }
}
