package io.rdmaflux.ud.dr;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When DR gives a rail up: more than {@code maxRetriesPerRail} timeouts <em>and</em> {@code railTimeoutNs} without an
 * ACK, in virtual time. The load spike that made it give up on a live in-JVM peer (a stalled progress thread: no ACKs
 * and no local completions for a while) is a cut rail here, healed before the rail timeout.
 */
class DrGiveUpTest {
    /** A few fast timeouts (RTO 0.1..2 ms, 4 of them take about 3 ms), and 50 ms without an ACK before giving up. */
    private static final DrConfig C = DrConfig.builder().datagramBytes(DrDatagram.HEADER_BYTES + 64).windowVfrags(16)
        .receiveBufferVfrags(32).initialRtoNs(200_000).minRtoNs(100_000).maxRtoNs(2_000_000).maxRetriesPerRail(3)
        .railTimeoutNs(50_000_000).localCompletionTimeoutNs(1_000_000).keepaliveNs(10_000_000).build();

    private static void assertAllDelivered(DrSimulation sim, int messages) {
        assertEquals(messages, sim.received.get(0).size());
        for (int i = 0; i < messages; i++) {
            assertTrue(Arrays.equals(sim.sent.get(0).get(i), sim.received.get(0).get(i)), "message " + i);
        }
    }

    @Test
    void aLivePeerSilentForManyTimeoutsButLessThanTheRailTimeoutIsNotGivenUp() {
        LossyWire wire = new LossyWire(21, 0, 0, 0, 0, 5_000);
        DrSimulation sim = new DrSimulation(C, wire, 1, 21, 3000, 150, true, 0);
        sim.run(300_000);
        wire.cut(0, true); // 30 ms of silence: ~15 timeouts at the RTO, more than maxRetriesPerRail
        sim.run(sim.nowNs + 30_000_000);
        assertNull(sim.ep[0].failure());
        assertTrue(sim.ep[0].stats().timeouts() > C.maxRetriesPerRail() + 1, sim.ep[0].stats().toString());
        wire.cut(0, false);
        assertTrue(sim.run(60_000_000_000L), () -> "stats " + sim.ep[0].stats() + " / " + sim.ep[1].stats());
        assertAllDelivered(sim, 3000);
        assertEquals(0, sim.ep[0].stats().failovers());
    }

    @Test
    void overdueLocalCompletionsCountOneRetryPerPassNotOnePerVfrag() {
        // a sink whose sends never complete locally (a stalled send queue) while the rail is silent for 10 ms: the
        // local-completion timer resends every VFRAG in flight, and that counts as one try, not 16
        LossyWire wire = new LossyWire(22, 0, 0, 0, 0, 5_000);
        long[] now = {0};
        DatagramSink wireSink = wire.sinkOf(0, () -> now[0]);
        DatagramSink posted = (rail, d, len, psn) -> wireSink.send(rail, d, len, psn) == DatagramSink.BACK_PRESSURED
            ? DatagramSink.BACK_PRESSURED : DatagramSink.POSTED;
        DrEndpoint a = new DrEndpoint(C, 1, 2, "b", 1, posted, 0);
        DrEndpoint b = new DrEndpoint(C, 2, 1, "a", 1, wire.sinkOf(1, () -> now[0]), 0);
        wire.attach(0, (rail, d, len, t) -> a.onDatagram(rail, d, 0, len, t));
        wire.attach(1, (rail, d, len, t) -> b.onDatagram(rail, d, 0, len, t));
        for (int i = 0; i < 200; i++) {
            a.offer(new byte[150]);
        }
        a.finish();
        b.finish();
        int got = 0;
        boolean healed = false;
        wire.cut(0, true);
        while (now[0] < 5_000_000_000L && !(a.outboundFinished() && b.inboundFinished())) {
            if (!healed && now[0] >= 10_000_000) {
                wire.cut(0, false);
                healed = true;
            }
            wire.deliver(now[0]);
            a.doWork(now[0]);
            b.doWork(now[0]);
            while (b.poll() != null) {
                got++;
            }
            assertNull(a.failure(), () -> "gave up on a live peer: " + a.failure());
            long next = Math.min(wire.nextDeliveryNs(), Math.min(a.nextDeadlineNs(), b.nextDeadlineNs()));
            now[0] = Math.max(now[0] + 1, Math.min(next, healed ? Long.MAX_VALUE : 10_000_000));
        }
        assertEquals(200, got);
        assertTrue(a.stats().vfragsRetransmitted() > 16, a.stats().toString());
    }

    @Test
    void anAckWithoutProgressRestartsTheGiveUpClock() {
        RailSet rails = new RailSet(1, 0);
        for (int i = 0; i < 10; i++) {
            rails.countRetry();
        }
        assertTrue(rails.exhausted(50_000_000, 3, 50_000_000));
        rails.ackOn(0, 40_000_000); // a duplicate ACK: the peer is there
        assertTrue(!rails.exhausted(50_000_000, 3, 50_000_000));
        assertTrue(rails.exhausted(90_000_000, 3, 50_000_000));
        assertTrue(!rails.exhausted(90_000_000, 10, 50_000_000), "needs more than maxRetriesPerRail timeouts too");
    }

    @Test
    void theBoundIsTheLongerOfTheRetriesAndTheRailTimeout() {
        assertEquals(52_000_000, C.railFailureBoundNs());
        assertEquals(2 * 52_000_000 + 1_000_000, C.failureBoundNs(2));
        DrConfig manyRetries = C.toBuilder().maxRetriesPerRail(99).build();
        assertEquals(100 * 2_000_000, manyRetries.railFailureBoundNs());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DrConfig.builder().railTimeoutNs(0));
        assertEquals("railTimeoutNs > 0 required but it was 0", e.getMessage());
    }
}
