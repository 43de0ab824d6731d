package io.rdmaflux.striping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Seed 000 §4.4: window-based round robin against plain round robin on rails of different latency. */
class MultiplexingSimulationTest {
    static final long GB = 1_000_000_000L;

    private static long outOfOrder(MultiplexingPolicy.Factory policy) {
        VirtualTimeLoop loop = new VirtualTimeLoop();
        SimLink[] links = {new SimLink(loop, "near", GB, 2_000, 4096), new SimLink(loop, "far", GB, 10_000, 4096)};
        RailsSpec spec = RailsSpec.rails(2).multiplexing(policy).switchoverThresholdBytes(Long.MAX_VALUE).maxInFlightMessages(256);
        // 256-byte messages, one per microsecond: the per-message cost dominates (§4.4)
        SimSender s = new SimSender(loop, spec, links, 10_000, i -> 256).paced(1_000);
        s.pump();
        assertTrue(loop.runToIdle(1_000_000_000L));
        assertEquals(10_000, s.delivered.size());
        for (int i = 0; i < s.delivered.size(); i++) {
            assertEquals(i, s.delivered.get(i));
        }
        return s.receiver.outOfOrderArrivals();
    }

    @Test
    void windowRoundRobinHasFewerOutOfOrderArrivalsThanRoundRobin() {
        long rr = outOfOrder(MultiplexingPolicies.roundRobin());
        long window = outOfOrder(MultiplexingPolicies.windowRoundRobin(32));
        long binding = outOfOrder(MultiplexingPolicies.binding(0));
        System.out.println("out-of-order of 10000: rr " + rr + ", window-rr(32) " + window + ", binding " + binding);
        // plain RR: every message on the near rail overtakes the one before it on the far rail
        assertTrue(rr >= 4_900, "rr " + rr);
        // window of 32 µs against an 8 µs latency gap: only the first ~8 of every 64 overtake
        assertTrue(window <= rr / 3, "window " + window + " vs rr " + rr);
        assertEquals(0, binding);
    }
}
