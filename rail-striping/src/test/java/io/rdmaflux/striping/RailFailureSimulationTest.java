package io.rdmaflux.striping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A rail killed mid-stream: every message delivered exactly once, in order. */
class RailFailureSimulationTest {
    static final long GB = 1_000_000_000L;
    static final long MB = 1_000_000L;

    private static long size(long i) {
        // a mix of multiplexed (small) and striped (large) messages
        return switch ((int) (i % 4)) {
            case 0 -> 300;
            case 1 -> 200_000;
            case 2 -> 1 << 20;
            default -> 64 * 1024;
        };
    }

    @Test
    void everyMessageIsDeliveredExactlyOnceInOrderWhenARailDiesMidStream() {
        int killed = 0;
        // kill at many instants, so the failure lands before, during and after arrivals and acks
        for (long killAt = 1_000_000; killAt < 3_000_000; killAt += 37_119) {
            VirtualTimeLoop loop = new VirtualTimeLoop();
            SimLink[] links = {
                new SimLink(loop, "r0", GB, 3_000, 64 * 1024),
                new SimLink(loop, "r1", 500 * MB, 5_000, 64 * 1024),
                new SimLink(loop, "r2", 250 * MB, 1_000, 64 * 1024),
            };
            RailsSpec spec = RailsSpec.rails(3).striping(StripingPolicies.adaptive()).multiplexing(MultiplexingPolicies.roundRobin())
                .switchoverThresholdBytes(128 * 1024).maxInFlightMessages(32);
            SimSender s = new SimSender(loop, spec, links, 400, RailFailureSimulationTest::size);
            int victim = (int) (killAt % 3);
            long[] postedAtFailure = {-1};
            loop.at(killAt, () -> {
                s.failRail(victim);
                postedAtFailure[0] = s.scheduler.metrics().railStripesPosted()[victim];
            });
            s.pump();
            assertTrue(loop.runToIdle(60_000_000_000L), "kill at " + killAt);
            assertEquals(400, s.delivered.size(), "kill at " + killAt);
            assertEquals(400, s.completed.size(), "kill at " + killAt);
            for (int i = 0; i < 400; i++) {
                assertEquals(i, s.delivered.get(i), "receiver order, kill at " + killAt);
                assertEquals(i, s.completed.get(i), "sender completion order, kill at " + killAt);
            }
            StripingMetrics m = s.scheduler.metrics();
            assertTrue(!m.railUp()[victim]);
            assertEquals(0.0, m.weights()[victim]);
            killed++;
            // nothing was posted on the dead rail after the failure: neither counted by the scheduler
            // nor handed to the dead link
            assertTrue(postedAtFailure[0] >= 0, "the failure ran, kill at " + killAt);
            assertEquals(postedAtFailure[0], m.railStripesPosted()[victim], "posted on rail " + victim + " after its failure");
            assertEquals(0, s.postedToDeadLink, "stripes handed to a dead link, kill at " + killAt);
        }
        assertTrue(killed > 50);
    }

    @Test
    void aStripeWhoseAcknowledgementWasLostIsResentAndTheReceiverDropsTheCopy() {
        VirtualTimeLoop loop = new VirtualTimeLoop();
        SimLink[] links = {new SimLink(loop, "far", GB, 100_000, 64 * 1024), new SimLink(loop, "near", GB, 1_000, 64 * 1024)};
        RailsSpec spec = RailsSpec.rails(2).multiplexing(MultiplexingPolicies.binding(0)).switchoverThresholdBytes(Long.MAX_VALUE);
        SimSender s = new SimSender(loop, spec, links, 3, i -> 1000);
        // the 3 messages arrive at ~101 us; their acknowledgements would come back at ~201 us
        loop.at(150_000, () -> s.failRail(0));
        s.pump();
        assertTrue(loop.runToIdle(1_000_000_000L));
        assertEquals(List.of(0L, 1L, 2L), s.delivered);
        assertEquals(List.of(0L, 1L, 2L), s.completed);
        assertEquals(3, s.receiver.duplicates());
        assertEquals(3, s.scheduler.metrics().resentStripes());
    }

    @Test
    void whenTheLastRailDiesEveryInFlightMessageIsHandedBackNotLost() {
        VirtualTimeLoop loop = new VirtualTimeLoop();
        SimLink[] links = {new SimLink(loop, "r0", GB, 3_000, 64 * 1024), new SimLink(loop, "r1", GB, 3_000, 64 * 1024)};
        RailsSpec spec = RailsSpec.rails(2).maxInFlightMessages(16);
        SimSender s = new SimSender(loop, spec, links, 1000, RailFailureSimulationTest::size);
        loop.at(500_000, () -> s.failRail(0));
        loop.at(900_000, () -> s.failRail(1));
        s.pump();
        loop.runToIdle(10_000_000_000L);
        assertNotNull(s.scheduler.noRailCause());
        List<Long> handedBack = new ArrayList<>();
        s.scheduler.drainInFlight((m, psn, len) -> handedBack.add(m));
        // every message sent is either completed or handed back, none twice
        Set<Long> all = new HashSet<>(s.completed);
        for (Long m : handedBack) {
            assertTrue(all.add(m), "message " + m + " both completed and handed back");
        }
        assertEquals(s.sent(), all.size());
        assertEquals(CommunicationScheduler.NO_RAIL, s.scheduler.send(-1L, 1, loop.nowNs()));
    }
}
