package io.rdmaflux.benchmarks.striping;

import java.util.Arrays;
import java.util.Locale;

/**
 * Diagnostic, real time: MB/s and weights of one policy over soft rails of the given rates, after
 * one warm-up round. Arguments: rates in bytes/s, comma-separated (0 = unshaped); policy (adaptive,
 * adaptive-per-message, even, weighted, rail0, rail1); messages in flight; 1 MiB messages per round;
 * rounds. Pin it beside a busy loop ({@code taskset -c 1}) to see how a policy copes with a
 * progress thread that gets half a core.
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar
 * io.rdmaflux.benchmarks.striping.StripingProbe 400000000,100000000 adaptive 8 64 4}
 */
public final class StripingProbe {
    private StripingProbe() {
    }

    public static void main(String[] args) {
        long[] rates = Arrays.stream(args[0].split(",")).mapToLong(r -> r.equals("0") ? Long.MAX_VALUE : Long.parseLong(r)).toArray();
        String policy = args[1];
        int inFlight = Integer.parseInt(args[2]);
        int messages = Integer.parseInt(args[3]);
        int rounds = Integer.parseInt(args[4]);
        long size = 1 << 20;
        try (StripingBench bench = new StripingBench(rates)) {
            var s = bench.scheduler(StripingBandwidthBenchmark.spec(policy, inFlight));
            bench.transfer(s, messages, size);
            for (int r = 0; r < rounds; r++) {
                long ns = bench.transfer(s, messages, size);
                System.out.println(String.format(Locale.ROOT, "%s %s inFlight=%d: %.1f MB/s weights %.4f/%.4f", args[0], policy, inFlight,
                    messages * (double) size * 1e3 / ns, s.metrics().weights()[0], s.metrics().weights()[1]));
            }
        }
    }
}
