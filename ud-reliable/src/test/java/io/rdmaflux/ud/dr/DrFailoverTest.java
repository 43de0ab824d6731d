package io.rdmaflux.ud.dr;

import io.rdmaflux.core.RdmaTransportException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Rail failover, dead-rail probing and the vanished peer, in virtual time. */
class DrFailoverTest {
    private static final DrConfig C = DrConfig.builder().datagramBytes(DrDatagram.HEADER_BYTES + 64).windowVfrags(16)
        .receiveBufferVfrags(32).initialRtoNs(200_000).minRtoNs(100_000).maxRtoNs(2_000_000).maxRetriesPerRail(3)
        .railTimeoutNs(10_000_000).deadRailProbeIntervalNs(5_000_000).keepaliveNs(10_000_000).build();

    @Test
    void aCutRailFailsOverToTheOtherAndNothingIsLost() {
        LossyWire wire = new LossyWire(3, 0.01, 0, 0, 0, 5_000);
        DrSimulation sim = new DrSimulation(C, wire, 2, 3, 4000, 150, true, 0);
        sim.run(1_000_000); // traffic flows on rail 0
        assertEquals(0, sim.ep[0].currentRail());
        assertTrue(sim.ep[0].inFlight() > 0 || sim.ep[0].queuedMessages() > 0, "still sending when the rail is cut");
        wire.cut(0, true);
        long cutAt = sim.nowNs;
        assertTrue(sim.run(60_000_000_000L), () -> "stats " + sim.ep[0].stats() + " / " + sim.ep[1].stats());
        assertEquals(1, sim.ep[0].currentRail());
        assertTrue(sim.ep[0].stats().failovers() >= 1);
        assertEquals(4000, sim.received.get(0).size());
        assertEquals(4000, sim.received.get(1).size());
        for (int i = 0; i < 4000; i++) {
            assertTrue(java.util.Arrays.equals(sim.sent.get(0).get(i), sim.received.get(0).get(i)), "message " + i);
        }
        assertTrue(sim.nowNs - cutAt < C.failureBoundNs(2), "took " + (sim.nowNs - cutAt) + " ns");
    }

    @Test
    void aFailedRailIsProbedBackWhenItHeals() {
        LossyWire wire = new LossyWire(5, 0, 0, 0, 0, 5_000);
        DrSimulation sim = new DrSimulation(C, wire, 2, 5, 20000, 150, false, 0);
        sim.run(500_000);
        wire.cut(0, true);
        sim.run(sim.nowNs + 20_000_000);
        assertTrue(sim.ep[0].railFailed(0));
        wire.cut(0, false);
        sim.run(sim.nowNs + 2 * C.deadRailProbeIntervalNs());
        assertFalse(sim.ep[0].railFailed(0), "rail 0 answered a probe");
        assertEquals(1, sim.ep[0].stats().railsRevived());
    }

    @Test
    void aVanishedPeerFailsBothDirectionsNamingPeerRailsAndRetriesWithinTheBound() {
        LossyWire wire = new LossyWire(9, 0, 0, 0, 0, 5_000);
        DrSimulation sim = new DrSimulation(C, wire, 2, 9, 5000, 150, false, 0);
        sim.run(300_000);
        wire.vanish(1);
        long vanishedAt = sim.nowNs;
        assertFalse(sim.run(10_000_000_000L));
        RdmaTransportException e = assertInstanceOf(RdmaTransportException.class, sim.ep[0].failure());
        assertTrue(e.getMessage().contains("peer node-1"), e.getMessage());
        // each rail: more than maxRetriesPerRail (3) timeouts and at least railTimeoutNs (10 ms) without an ACK
        assertTrue(e.getMessage().matches("(?s).*rail 0 \\(([4-9]|\\d\\d+) retries, no ACK for 1\\d ms\\), rail 1 \\(([4-9]|\\d\\d+) retries, no ACK for 1\\d ms\\).*"),
            e.getMessage());
        assertTrue(sim.nowNs - vanishedAt <= C.failureBoundNs(2), "failed after " + (sim.nowNs - vanishedAt) + " ns, bound "
            + C.failureBoundNs(2));
    }

    @Test
    void aReceiverThatOnlyWaitsDetectsItsVanishedPeerByKeepalive() {
        LossyWire wire = new LossyWire(13, 0, 0, 0, 0, 5_000);
        DrEndpoint[] ep = new DrEndpoint[1];
        long[] now = {0};
        ep[0] = new DrEndpoint(C, 1, 2, "silent-peer", 1, wire.sinkOf(0, () -> now[0]), 0);
        wire.attach(0, (rail, d, len, t) -> ep[0].onDatagram(rail, d, 0, len, t));
        wire.attach(1, (rail, d, len, t) -> { });
        while (now[0] < 1_000_000_000L) {
            ep[0].doWork(now[0]);
            wire.deliver(now[0]);
            if (ep[0].failure() != null) {
                break;
            }
            now[0] = Math.max(now[0] + 1, ep[0].nextDeadlineNs());
        }
        assertNotNull(ep[0].failure());
        assertTrue(ep[0].failure().getMessage().contains("silent-peer"));
        assertTrue(now[0] <= C.keepaliveNs() + C.failureBoundNs(1), "failed at " + now[0]);
    }
}
