package io.rdmaflux.benchmarks.striping;

import java.util.Arrays;
import java.util.Locale;

/** Diagnostic: MB/s of one policy over given rail rates, real time. Args: rates(csv, 0 = unshaped) policy inFlight messages rounds. */
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
