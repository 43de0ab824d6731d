package io.rdmaflux.ud.dr;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Seeded property tests of {@link DrEndpoint} in virtual time over a {@link LossyWire}: for thousands of seeds
 * with random loss, duplication, reordering and corruption, every message arrives exactly once, whole and in
 * order, and every corrupted datagram is caught. A failing seed is shrunk to the fewest messages that still fail.
 */
class DrPropertyTest {
    private static final DrConfig SMALL = DrConfig.builder().datagramBytes(DrDatagram.HEADER_BYTES + 64).windowVfrags(16)
        .receiveBufferVfrags(32).ackEveryVfrags(4).ackDelayNs(20_000).initialRtoNs(400_000).minRtoNs(50_000)
        .maxRtoNs(5_000_000).maxRetriesPerRail(30).build();
    private static final long LIMIT_NS = 60_000_000_000L;

    /** One trial: what it found wrong, or null. */
    private static String trial(long seed, int messages, RetransmitMode mode) {
        SplittableRandom r = new SplittableRandom(seed);
        double loss = r.nextDouble() * 0.3;
        double dup = r.nextDouble() * 0.2;
        double reorder = r.nextDouble() * 0.3;
        double corrupt = r.nextDouble() * 0.1;
        boolean bidi = r.nextBoolean();
        int firstPsn = r.nextBoolean() ? -5 - r.nextInt(20) : r.nextInt(); // wraps past 2^32 in many seeds
        DrConfig c = SMALL.toBuilder().mode(mode).firstPsn(firstPsn).build();
        LossyWire wire = new LossyWire(seed, loss, dup, reorder, corrupt, 5_000);
        DrSimulation sim = new DrSimulation(c, wire, 1, seed, messages, 200, bidi, 0);
        String params = "seed=" + seed + " messages=" + messages + " loss=" + loss + " dup=" + dup + " reorder=" + reorder
            + " corrupt=" + corrupt + " bidi=" + bidi + " firstPsn=" + firstPsn + " mode=" + mode;
        if (!sim.run(LIMIT_NS)) {
            return "did not finish: " + params + " failure0=" + sim.ep[0].failure() + " failure1=" + sim.ep[1].failure()
                + " stats0=" + sim.ep[0].stats() + " stats1=" + sim.ep[1].stats();
        }
        for (int n = 0; n < (bidi ? 2 : 1); n++) {
            String problem = sim.deliveryProblem(n);
            if (problem != null) {
                return problem + ": " + params;
            }
        }
        String corruption = sim.corruptionProblem();
        if (corruption != null) {
            return corruption + ": " + params;
        }
        return null;
    }

    private static void property(int seeds, int messages, RetransmitMode mode) {
        for (long seed = 1; seed <= seeds; seed++) {
            long s = seed;
            String failure = trial(s, messages, mode);
            if (failure != null) {
                fail("shrunk: " + shrink(n -> trial(s, n, mode), messages) + "\noriginal: " + failure);
            }
        }
    }

    /** The smallest message count (halving, then stepping) that still fails, with its failure. */
    static String shrink(IntFunction<String> trialOfMessages, int messages) {
        int n = messages;
        String last = trialOfMessages.apply(n);
        while (n > 1) {
            String f = trialOfMessages.apply(n / 2);
            if (f == null) {
                break;
            }
            n /= 2;
            last = f;
        }
        for (int m = 1; m < n; m++) {
            String f = trialOfMessages.apply(m);
            if (f != null) {
                return f;
            }
        }
        return last;
    }

    @Test
    void everyMessageArrivesOnceWholeAndInOrderUnderLossDuplicationReorderAndCorruption() {
        property(2000, 40, RetransmitMode.SELECTIVE);
    }

    @Test
    void goBackNIsAsCorrectAsSelective() {
        property(300, 30, RetransmitMode.GO_BACK_N);
    }

    @Test
    void aCleanWireNeedsNoRetransmission() {
        LossyWire wire = new LossyWire(7, 0, 0, 0, 0, 5_000);
        DrSimulation sim = new DrSimulation(SMALL, wire, 1, 7, 500, 300, true, 0);
        assertTrue(sim.run(LIMIT_NS));
        assertEquals(0, sim.ep[0].stats().vfragsRetransmitted(), sim.ep[0].stats().toString());
        assertEquals(0, sim.ep[1].stats().vfragsRetransmitted(), sim.ep[1].stats().toString());
        assertTrue(sim.ep[0].stats().rttSamples() > 0);
        // coalesced: fewer ACKs than VFRAGs
        assertTrue(sim.ep[1].stats().acksSent() < sim.ep[0].stats().vfragsSent(), sim.ep[1].stats().toString());
    }

    @Test
    void aSlowConsumerBacksItsSenderOffWithoutLoss() {
        LossyWire wire = new LossyWire(11, 0, 0, 0, 0, 5_000);
        DrSimulation sim = new DrSimulation(SMALL, wire, 1, 11, 300, 64, false, 1_000_000);
        assertTrue(sim.run(LIMIT_NS));
        assertEquals(300, sim.received.get(0).size());
        DrStats rx = sim.ep[1].stats();
        assertEquals(0, rx.outOfWindowDropped(), rx.toString());
        assertEquals(0, sim.ep[0].stats().vfragsRetransmitted(), sim.ep[0].stats().toString());
        // buffered messages never exceed what the credit allows (receiveBufferVfrags VFRAGs, at least one each)
        assertTrue(sim.maxReadyMessages <= SMALL.receiveBufferVfrags(), "held " + sim.maxReadyMessages);
    }
}
