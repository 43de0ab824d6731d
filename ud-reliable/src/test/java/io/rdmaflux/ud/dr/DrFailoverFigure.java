package io.rdmaflux.ud.dr;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Figure, not a test (no timing assertion; runs only with {@code -Dud.figures=true}): failover time in
 * virtual time. Two rails, node 0 streams to node 1 (bidirectional, 1 % loss, 5 µs one way) until traffic flows on
 * rail 0, then rail 0 is cut both ways. Printed per seed: cut &rarr; failover (the sender's current rail becomes 1),
 * cut &rarr; first message delivered after the cut, against {@link DrConfig#failureBoundNs(int)} for two rails; and
 * that nothing was lost. For {@code DrFailoverTest}'s configuration (RTO 0.1..2 ms, 3 retries, rail timeout 10 ms)
 * for {@link DrConfig#DEFAULTS}; and for what a UD channel runs with node defaults ({@code UdSpec.DEFAULTS} lifted to
 * {@code QpTimeouts.DEFAULTS} as {@code ReliableDatagramQp} lifts it).
 *
 * <p>Run: {@code mvn -o -q -pl ud-reliable -am test -Dtest=DrFailoverFigure -Dud.figures=true
 * -Dsurefire.failIfNoSpecifiedTests=false} (output in
 * {@code ud-reliable/target/surefire-reports/io.rdmaflux.ud.dr.DrFailoverFigure-output.txt}).
 */
@EnabledIfSystemProperty(named = "ud.figures", matches = "true")
class DrFailoverFigure {
    private static final DrConfig TEST = DrConfig.builder().datagramBytes(DrDatagram.HEADER_BYTES + 64).windowVfrags(16)
        .receiveBufferVfrags(32).initialRtoNs(200_000).minRtoNs(100_000).maxRtoNs(2_000_000).maxRetriesPerRail(3)
        .railTimeoutNs(10_000_000).deadRailProbeIntervalNs(5_000_000).keepaliveNs(10_000_000).build();

    @Test
    void failoverTime() {
        print("DrFailoverTest config", TEST, 10_000);
        print("DrConfig.DEFAULTS", DrConfig.DEFAULTS, 100_000);
        // what a UD channel runs with node defaults: UdSpec.DEFAULTS lifted to QpTimeouts.DEFAULTS (200 ms x 7 retries)
        // as ReliableDatagramQp lifts it
        DrConfig ud = io.rdmaflux.ud.UdSpec.DEFAULTS.dr();
        long retryTimeoutNs = io.rdmaflux.core.channel.QpTimeouts.DEFAULTS.retryTimeoutNs();
        int retryCount = io.rdmaflux.core.channel.QpTimeouts.DEFAULTS.retryCount();
        print("UD channel, node defaults", ud.toBuilder().maxRtoNs(Math.max(ud.maxRtoNs(), retryTimeoutNs))
            .maxRetriesPerRail(Math.max(ud.maxRetriesPerRail(), retryCount))
            .railTimeoutNs(Math.max(ud.railTimeoutNs(), (retryCount + 1L) * retryTimeoutNs)).build(), 100_000);
    }

    private static void print(String name, DrConfig c, long stepNs) {
        List<Long> failover = new ArrayList<>();
        List<Long> resumed = new ArrayList<>();
        for (long seed = 1; seed <= 9; seed++) {
            LossyWire wire = new LossyWire(seed, 0.01, 0, 0, 0, 5_000);
            DrSimulation sim = new DrSimulation(c, wire, 2, seed, 50_000, 150, true, 0);
            sim.run(1_000_000);
            if (sim.ep[0].currentRail() != 0) {
                throw new AssertionError("seed " + seed + ": not on rail 0 before the cut");
            }
            wire.cut(0, true);
            long cutAt = sim.nowNs;
            int before = sim.received.get(0).size();
            long tFail = -1;
            long tResume = -1;
            while ((tFail < 0 || tResume < 0) && sim.nowNs - cutAt < 4 * c.failureBoundNs(2)) {
                if (sim.run(sim.nowNs + stepNs)) {
                    break;
                }
                if (tFail < 0 && sim.ep[0].currentRail() == 1) {
                    tFail = sim.nowNs - cutAt;
                }
                if (tResume < 0 && sim.received.get(0).size() > before && tFail >= 0) {
                    tResume = sim.nowNs - cutAt;
                }
            }
            boolean finished = sim.run(Long.MAX_VALUE / 4);
            boolean intact = finished && sim.received.get(0).size() == sim.sent.get(0).size();
            for (int i = 0; intact && i < sim.sent.get(0).size(); i++) {
                intact = java.util.Arrays.equals(sim.sent.get(0).get(i), sim.received.get(0).get(i));
            }
            System.out.printf("%s seed %d: cut->failover %.3f ms, cut->first delivery after failover %.3f ms, all %d messages intact: %s%n",
                name, seed, tFail / 1e6, tResume / 1e6, sim.sent.get(0).size(), intact);
            failover.add(tFail);
            resumed.add(tResume);
        }
        Collections.sort(failover);
        Collections.sort(resumed);
        System.out.printf("%s: median cut->failover %.3f ms (max %.3f), cut->traffic resumed %.3f ms (max %.3f); failureBoundNs(2) = %.3f ms "
                + "(step %d us)%n", name, failover.get(4) / 1e6, failover.get(8) / 1e6, resumed.get(4) / 1e6, resumed.get(8) / 1e6,
            c.failureBoundNs(2) / 1e6, stepNs / 1000);
    }
}
