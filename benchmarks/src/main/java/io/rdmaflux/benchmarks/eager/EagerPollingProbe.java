package io.rdmaflux.benchmarks.eager;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;

/**
 * Polling cost of idle peers (seed 001 &sect;4.6) measured as progress-thread CPU time, which a loaded
 * host disturbs far less than wall time: for 1, 16, 64 and 256 idle connections into one server node,
 * a pair with every ring polled (eager on) and a pair with none (off) live side by side, and rounds of
 * {@value #PASSES} idle duty cycles of the server node alternate between them; the figure is the median
 * round, in ns of thread CPU per duty cycle, and the difference per idle peer.
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.eager.EagerPollingProbe [rounds]}
 */
public final class EagerPollingProbe {
    static final int PASSES = 20_000;

    private EagerPollingProbe() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.println("idle peers | eager on: ns CPU / duty cycle | off | (on - off) / peer");
        for (int peers : new int[] {1, 16, 64, 256}) {
            try (EagerPair on = open(true, peers); EagerPair off = open(false, peers)) {
                long[] a = new long[rounds];
                long[] b = new long[rounds];
                for (int w = 0; w < 3; w++) {
                    cpuPerPass(mx, on);
                    cpuPerPass(mx, off);
                }
                for (int r = 0; r < rounds; r++) {
                    a[r] = cpuPerPass(mx, on);
                    b[r] = cpuPerPass(mx, off);
                }
                Arrays.sort(a);
                Arrays.sort(b);
                long ma = a[rounds / 2];
                long mb = b[rounds / 2];
                System.out.printf(Locale.ROOT, "%10d | %8d | %8d | %6.1f%n", peers, ma, mb, (ma - mb) / (double) peers);
            }
        }
    }

    private static EagerPair open(boolean eager, int peers) {
        EagerPair p = new EagerPair("mem", eager, 256, 4, peers);
        for (int i = 0; i < peers; i++) {
            p.connect();
        }
        return p;
    }

    private static long cpuPerPass(ThreadMXBean mx, EagerPair p) {
        long t0 = mx.getCurrentThreadCpuTime();
        for (int i = 0; i < PASSES; i++) {
            p.server.invoke();
        }
        return (mx.getCurrentThreadCpuTime() - t0) / PASSES;
    }
}
