package io.rdmaflux.benchmarks.striping;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Locale;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link StripingPairedBenchmark} and {@link ReconvergenceBenchmark} and writes the ratios to
 * {@code striping-figures.md} in the directory given as first argument.
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -Djmh.ignoreLock=true -cp benchmarks/target/benchmarks.jar
 * io.rdmaflux.benchmarks.striping.StripingFigures rail-striping/reports}
 */
public final class StripingFigures {
    private StripingFigures() {
    }

    private static double aux(RunResult r, String name) {
        return r.getSecondaryResults().get(name).getScore();
    }

    /**
     * Bytes per ns of {@code messages} messages of {@code size} with {@code policy}, on a fresh
     * virtual-time bench, after {@code warmUpMessages} messages on the same scheduler (0: adaptive
     * from equal weights, as {@link StripingPairedBenchmark} measures it).
     */
    private static double virtualRate(long[] rates, String policy, int inFlight, int messages, long size, int warmUpMessages) {
        try (StripingBench bench = new StripingBench(true, rates)) {
            var s = bench.scheduler(StripingBandwidthBenchmark.spec(policy, inFlight));
            if (warmUpMessages > 0) {
                bench.transfer(s, warmUpMessages, size);
            }
            return (double) messages * size / bench.transfer(s, messages, size);
        }
    }

    private static double virtualRate(long[] rates, String policy, int inFlight, int messages, long size) {
        return virtualRate(rates, policy, inFlight, messages, size, 16);
    }

    /**
     * The same ratios on the same soft rails in virtual time: the providers, the scheduler and the
     * RDMA WRITE stripes are all the same code, only the clock is virtual, so the figures do not
     * depend on how busy the machine is.
     */
    static String virtualTimeFigures() {
        long mib = 1 << 20;
        long[] fourToOne = {1_000_000_000L, 250_000_000L};
        long[] equal = {500_000_000L, 500_000_000L};
        StringBuilder md = new StringBuilder("\n## The same in virtual time (soft provider, VirtualClock, 4 in flight, 1 MiB)\n\n"
            + "| figure | value | target |\n|---|---|---|\n");
        double aggregate = virtualRate(fourToOne, "rail0", 4, 64, mib) + virtualRate(fourToOne, "rail1", 4, 64, mib);
        md.append(String.format(Locale.ROOT, "| 4:1 rails (1 GB/s + 250 MB/s): adaptive from equal weights (64 messages) / aggregate | %.3f | >= 0.98 |%n",
            virtualRate(fourToOne, "adaptive", 4, 64, mib, 0) / aggregate));
        md.append(String.format(Locale.ROOT, "| 4:1 rails: the same with the common-finish top-up (what connections do) / aggregate | %.3f | >= 0.98 |%n",
            virtualRate(fourToOne, "adaptive-common-finish", 4, 64, mib, 0) / aggregate));
        md.append(String.format(Locale.ROOT, "| 4:1 rails: adaptive after 16 messages (converged) / aggregate | %.3f | (reference) |%n",
            virtualRate(fourToOne, "adaptive", 4, 64, mib) / aggregate));
        md.append(String.format(Locale.ROOT, "| 4:1 rails: even / aggregate | %.3f | (reference) |%n",
            virtualRate(fourToOne, "even", 4, 64, mib) / aggregate));
        md.append(String.format(Locale.ROOT, "| 4:1 rails: static weighted 4:1 / aggregate | %.3f | (reference) |%n",
            virtualRate(fourToOne, "weighted", 4, 64, mib) / aggregate));
        md.append(String.format(Locale.ROOT, "| 1:1 rails (2 x 500 MB/s): even / one rail | %.3f | >= 1.95 |%n",
            virtualRate(equal, "even", 4, 64, mib) / virtualRate(equal, "rail0", 4, 64, mib)));
        md.append(String.format(Locale.ROOT, "| 1:1 rails: 4 MiB latency striped / one rail | %.3f | about 0.5 |%n",
            virtualRate(equal, "rail0", 1, 4, 4 * mib) / virtualRate(equal, "even", 1, 4, 4 * mib)));
        return md.toString();
    }

    /**
     * MB/s the driving thread moves over two 100 GB/s rails (even striping, 8 in flight): the CPU's
     * ceiling for this bench, against which the shaped rails' rates are chosen.
     */
    static double cpuCeilingMBps() {
        try (StripingBench bench = new StripingBench(100_000_000_000L, 100_000_000_000L)) {
            var s = bench.scheduler(StripingBandwidthBenchmark.spec("even", 8));
            long size = 1 << 20;
            bench.transfer(s, 256, size);
            double best = 0;
            for (int i = 0; i < 3; i++) {
                best = Math.max(best, 256.0 * size * 1e3 / bench.transfer(s, 256, size));
            }
            return best;
        }
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    public static void main(String[] args) throws RunnerException, IOException {
        if (args.length > 2 && args[2].equals("virtual-only")) {
            System.out.println(virtualTimeFigures());
            return;
        }
        Path dir = Path.of(args.length > 0 ? args[0] : "rail-striping/reports");
        String loadBefore = loadAverage();
        double ceiling = cpuCeilingMBps();
        String inFlight = args.length > 1 ? args[1] : "8";
        Path medianFile = Files.createTempFile("striping-medians", ".txt");
        Options paired = new OptionsBuilder().include(StripingPairedBenchmark.class.getName()).param("inFlight", inFlight)
            .jvmArgsAppend("--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
                "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                "-Dchronicle.analytics.disable=true", "-Dstriping.figures.out=" + medianFile)
            .forks(1).warmupIterations(2).measurementIterations(5).warmupTime(TimeValue.seconds(2))
            .measurementTime(TimeValue.seconds(3)).build();
        Collection<RunResult> results = new Runner(paired).run();
        StringBuilder md = new StringBuilder("# rail-striping figures (real time, soft provider, token-bucket rails)\n\n");
        md.append("Ratios measured interleaved in one JMH run (StripingPairedBenchmark, ").append(inFlight)
            .append(" message(s) in flight, 1 MiB messages), ").append(Runtime.getRuntime().availableProcessors())
            .append(" CPUs, load average before the run: ").append(loadBefore).append(".\n\n")
            .append(String.format(Locale.ROOT, "CPU ceiling of the driving thread (2 unshaped 100 GB/s rails, even striping): %.0f MB/s; "
                + "the shaped rails below (500 MB/s together) use %.0f %% of it, so the rails, not the CPU, are the bottleneck. "
                + "Rails: token bucket (GCRA) %d KiB deep, 2 us latency, MTU 4096; driving thread parks up to 20 us when idle.%n%n",
                ceiling, 100 * 500 / ceiling, StripingBench.BURST_BYTES >> 10))
            .append("Adaptive starts from equal weights in every iteration (a fresh scheduler per JMH iteration, warm-up "
                + "iterations included), so its figure includes the convergence.\n\n")
            .append("| figure | value | target |\n|---|---|---|\n");
        for (RunResult r : results) {
            String rails = r.getParams().getParam("rails");
            if (rails.equals("4:1")) {
                double aggregate = 1 / aux(r, "rail0Ns") + 1 / aux(r, "rail1Ns");
                md.append(String.format(Locale.ROOT, "| 4:1 rails (400 + 100 MB/s): adaptive from equal weights at each iteration's start "
                    + "/ aggregate of the rails alone | %.3f | >= 0.98 |%n", (1 / aux(r, "adaptiveNs")) / aggregate));
                md.append(String.format(Locale.ROOT, "| 4:1 rails: the same with the common-finish top-up (`RailsSpec.commonFinish`, what "
                    + "connections do) / aggregate | %.3f | >= 0.98 |%n", (1 / aux(r, "adaptiveCommonFinishNs")) / aggregate));
                md.append(String.format(Locale.ROOT, "| 4:1 rails: even striping / aggregate | %.3f | (reference) |%n",
                    (1 / aux(r, "evenNs")) / aggregate));
                md.append(String.format(Locale.ROOT, "| 4:1 rails: static weighted 4:1 / aggregate | %.3f | (reference) |%n",
                    (1 / aux(r, "weightedNs")) / aggregate));
            } else {
                md.append(String.format(Locale.ROOT, "| 1:1 rails (2 x 250 MB/s): even striping bandwidth / one rail | %.3f | >= 1.95 |%n",
                    aux(r, "rail0Ns") / aux(r, "evenNs")));
                md.append(String.format(Locale.ROOT, "| 1:1 rails: 4 MiB latency striped / one rail | %.3f | about 0.5 |%n",
                    aux(r, "stripedLatencyNs") / aux(r, "singleLatencyNs")));
            }
        }
        Options reconverge = new OptionsBuilder().include(ReconvergenceBenchmark.class.getName()).forks(1).build();
        for (RunResult r : new Runner(reconverge).run()) {
            md.append(String.format(Locale.ROOT, "| re-convergence after rail 1 drops to 1/4 (2 x 1 GB/s nominal) | %.1f ms | <= 500 ms |%n",
                r.getPrimaryResult().getScore()));
        }
        md.append("\nMedians of the per-invocation ratios (robust to a load spike hitting one batch):\n\n```\n")
            .append(Files.readString(medianFile)).append("```\n");
        Files.deleteIfExists(medianFile);
        md.append("\nLoad average after the run: ").append(loadAverage()).append(". Real-time figures move by several percent "
            + "between runs on a busy machine (the single-rail references included); the virtual-time table below does not.\n");
        md.append(virtualTimeFigures());
        md.append("\nReproduce: `mvn -B -o -q -pl benchmarks package -DskipTests && flock /tmp/rdmaflux-bench.lock java $(cat .mvn/jvm-flags) "
            + "-cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.striping.StripingFigures rail-striping/reports`\n");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("striping-figures.md"), md);
        System.out.println(md);
    }
}
