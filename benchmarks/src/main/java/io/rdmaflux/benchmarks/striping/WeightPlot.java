package io.rdmaflux.benchmarks.striping;

import io.rdmaflux.striping.CommunicationScheduler;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingMetrics;
import io.rdmaflux.striping.StripingPolicies;
import io.rdmaflux.striping.WeightChart;
import io.rdmaflux.striping.verbs.RdmaTransfer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Seed 000 Fig. 20 in real time on the soft provider: two rails of {@code rate} bytes/s carry 1 MiB
 * messages with adaptive striping; rail 1 is throttled to a quarter at 1 s and restored at 3 s; the
 * weights over time are written as {@code striping-weights.html} (inline SVG) and
 * {@code striping-weights.csv} into the directory given as first argument.
 *
 * <p>Run (after {@code mvn -B -o -q -pl benchmarks package -DskipTests}):
 * {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.striping.WeightPlot rail-striping/reports}
 */
public final class WeightPlot {
    static final long SIZE = 1 << 20;

    private WeightPlot() {
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : "rail-striping/reports");
        long rate = args.length > 1 ? Long.parseLong(args[1]) : 250_000_000L;
        long throttleAtNs = 1_000_000_000L;
        long restoreAtNs = 3_000_000_000L;
        long endNs = 5_000_000_000L;
        List<StripingMetrics.WeightSample> history;
        long startNs;
        long[] followNs = new long[2];
        try (StripingBench bench = new StripingBench(rate, rate)) {
            CommunicationScheduler<RdmaTransfer> s = bench.scheduler(RailsSpec.rails(2).striping(StripingPolicies.adaptive())
                .maxInFlightMessages(2).switchoverThresholdBytes(0).weightHistoryCapacity(1 << 16));
            startNs = bench.clock.nanoTime();
            boolean throttled = false;
            boolean restored = false;
            while (bench.clock.nanoTime() - startNs < endNs) {
                long t = bench.clock.nanoTime() - startNs;
                if (!throttled && t >= throttleAtNs) {
                    bench.setRate(1, rate / 4);
                    throttled = true;
                }
                if (!restored && t >= restoreAtNs) {
                    bench.setRate(1, rate);
                    restored = true;
                }
                bench.transfer(s, 2, SIZE);
            }
            history = s.metrics().weightHistory();
        }
        followNs[0] = followTime(history, startNs + throttleAtNs, startNs + restoreAtNs, 0.8);
        followNs[1] = followTime(history, startNs + restoreAtNs, startNs + endNs, 0.5);
        Files.createDirectories(dir);
        StringBuilder csv = new StringBuilder("time_s,rail0_share,rail1_share\n");
        for (StripingMetrics.WeightSample w : history) {
            csv.append(String.format(Locale.ROOT, "%.6f,%.5f,%.5f%n", (w.timeNs() - startNs) / 1e9, w.shares()[0], w.shares()[1]));
        }
        Files.writeString(dir.resolve("striping-weights.csv"), csv);
        String title = String.format(Locale.ROOT, "Adaptive striping weights, real time, soft provider: 2 rails of %d MB/s, rail 1 "
            + "throttled to 1/4 from 1 s to 3 s. Followed the throttle in %.0f ms, the restore in %.0f ms.",
            rate / 1_000_000, followNs[0] / 1e6, followNs[1] / 1e6);
        Files.writeString(dir.resolve("striping-weights.html"), WeightChart.html(title, history, startNs, startNs + endNs,
            List.of(new WeightChart.Shade(startNs + throttleAtNs, startNs + restoreAtNs, "rail 1 at 1/4 capacity"))));
        System.out.println(title);
        System.out.println("wrote " + dir.resolve("striping-weights.html") + " and striping-weights.csv (" + history.size() + " samples)");
    }

    /** Time after {@code from} of the last sample outside 5% of the {@code target} ratio before {@code until}. */
    static long followTime(List<StripingMetrics.WeightSample> history, long from, long until, double target) {
        long last = from;
        double targetRatio = target / (1 - target);
        for (StripingMetrics.WeightSample w : history) {
            if (w.timeNs() >= from && w.timeNs() < until) {
                double ratio = w.shares()[0] / w.shares()[1];
                if (Math.abs(ratio / targetRatio - 1) > 0.05) {
                    last = w.timeNs();
                }
            }
        }
        return last - from;
    }

}
