package io.rdmaflux.ud.dr;

import org.junit.jupiter.api.Test;

import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Goodput under random loss relative to the same transfer without loss, selective retransmission against
 * go-back-N, in virtual time over a 10 Gb/s, 5 µs one-way {@link LossyWire} with a 2 KiB UD MTU and a send queue of
 * 512 datagrams (issue 14's targets for selective: &ge; 0.95 at 1 %, &ge; 0.85 at 5 %, &ge; 0.50 at 20 %).
 * Deterministic: the figures do not depend on
 * the machine or its load. Prints the table it checks.
 */
class DrGoodputTest {
    private static final DrConfig CONFIG = DrConfig.builder().datagramBytes(2048).windowVfrags(64).receiveBufferVfrags(512)
        .ackEveryVfrags(8).ackDelayNs(10_000).initialRtoNs(200_000).minRtoNs(50_000).maxRtoNs(10_000_000).maxRetriesPerRail(20)
        .maxMessageBytes(1 << 20).build();
    private static final long BANDWIDTH = 1_250_000_000L;

    /** Goodput of one transfer, bytes/s of virtual time. */
    private static double goodput(double loss, int messageBytes, int messages, RetransmitMode mode, long seed) {
        LossyWire wire = new LossyWire(seed, loss, 0, 0, 0, 5_000).bandwidth(BANDWIDTH);
        DrSimulation sim = new DrSimulation(CONFIG.toBuilder().mode(mode).build(), wire, 1, seed, messages, messageBytes, false, 0, true);
        assertTrue(sim.run(600_000_000_000L), "transfer finished: loss " + loss + " " + mode);
        long bytes = sim.sent.get(0).stream().mapToLong(b -> b.length).sum();
        if (System.getProperty("dr.goodput.debug") != null) {
            System.out.println(loss + " " + messageBytes + " " + mode + " " + sim.ep[0].stats() + " rx " + sim.ep[1].stats());
        }
        return bytes * 1e9 / sim.nowNs;
    }

    @Test
    void selectiveRetransmissionKeepsGoodputUnderLossAndBeatsGoBackN() {
        double[] losses = {0.01, 0.05, 0.20};
        // issue 14's targets; measured 0.99 / 0.92 / 0.63 for 4 KiB and 0.99 / 0.95 / 0.76 for 1 MiB (module README)
        double[] targets = {0.95, 0.85, 0.50};
        int[][] sizes = {{4096, 2000}, {1 << 20, 8}};
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%n# size      loss   selective  go-back-N   (goodput / goodput without loss, same seed)%n"));
        for (int[] s : sizes) {
            double baseSel = goodput(0, s[0], s[1], RetransmitMode.SELECTIVE, 1);
            double baseGbn = goodput(0, s[0], s[1], RetransmitMode.GO_BACK_N, 1);
            table.append(String.format(Locale.ROOT, "%-9d  0.00   %.0f MB/s  %.0f MB/s (absolute, no loss)%n", s[0], baseSel / 1e6, baseGbn / 1e6));
            for (int i = 0; i < losses.length; i++) {
                double sel = goodput(losses[i], s[0], s[1], RetransmitMode.SELECTIVE, 1) / baseSel;
                double gbn = goodput(losses[i], s[0], s[1], RetransmitMode.GO_BACK_N, 1) / baseGbn;
                table.append(String.format(Locale.ROOT, "%-9d  %.2f   %.3f      %.3f%n", s[0], losses[i], sel, gbn));
                assertTrue(sel >= targets[i], "selective at loss " + losses[i] + " size " + s[0] + ": " + sel + table);
                assertTrue(sel > gbn, "selective beats go-back-N at loss " + losses[i] + table);
            }
        }
        System.out.println(table);
    }
}
