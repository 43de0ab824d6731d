package io.rdmaflux.benchmarks.striping;

import io.rdmaflux.striping.CommunicationScheduler;
import io.rdmaflux.striping.verbs.RdmaTransfer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * The striping figures as ratios measured interleaved in one run: every invocation sends one batch
 * of 1 MiB messages with each policy over the same two shaped soft rails, one after the other, so
 * a busy machine slows all of them alike. The auxiliary counters hold the ns each policy took;
 * {@link StripingFigures} turns them into ratios.
 *
 * <ul>
 *   <li>{@code 4:1}: adaptive (from equal weights, no a-priori knowledge), even and static 4:1
 *       against the aggregate of the two rails each used alone (seed 000 §6.3 Fig. 18). The adaptive
 *       scheduler is created afresh for every iteration, warm-up and measured alike, so each measured
 *       iteration starts from equal weights and its time includes the convergence; one created per
 *       trial had converged during warm-up, and "from equal weights" then measured converged weights.</li>
 *   <li>{@code 1:1}: even striping against one rail (bandwidth, seed 000 Fig. 7), and the latency
 *       of one 4 MiB message striped against one rail (Fig. 5).</li>
 * </ul>
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar StripingPaired -f1 -wi 2 -i 5 -w 2s -r 2s}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "-Dchronicle.analytics.disable=true"})
public class StripingPairedBenchmark {
    /**
     * Messages per policy per invocation: 32 MiB, so a late look at the last completion (a time
     * slice of another process) is a small part of even the fastest batch.
     */
    static final int BATCH = 32;
    static final long SIZE = 1 << 20;
    static final long LARGE = 4 << 20;

    /** {@code 4:1}: 400 + 100 MB/s; {@code 1:1}: 2 x 250 MB/s (see {@link StripingBandwidthBenchmark#rates}). */
    @Param({"4:1", "1:1"})
    public String rails;

    /**
     * Messages in flight per policy (bandwidth; the 4 MiB latency figure always has one). 8 x 1 MiB
     * keeps every rail backlogged for about 16 ms, longer than the driving thread is ever
     * descheduled on a busy 2-core machine, as a bandwidth test's window of messages does (OSU bw
     * posts 64); with one in flight, each message's last ACK is seen late whenever the thread was
     * away, and the rails idle until the next message is posted.
     */
    @Param({"8"})
    public int inFlight;

    /** Time per policy, summed over the iteration's invocations. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Times {
        public long adaptiveNs;
        public long adaptiveCommonFinishNs;
        public long evenNs;
        public long weightedNs;
        public long rail0Ns;
        public long rail1Ns;
        public long stripedLatencyNs;
        public long singleLatencyNs;

        @Setup(Level.Iteration)
        public void clear() {
            adaptiveNs = 0;
            adaptiveCommonFinishNs = 0;
            evenNs = 0;
            weightedNs = 0;
            rail0Ns = 0;
            rail1Ns = 0;
            stripedLatencyNs = 0;
            singleLatencyNs = 0;
        }
    }

    /**
     * Per measured invocation: ns per policy (indices 0-6 and 8 as in {@link #policies}), and at index 7
     * whether it was the first of its iteration (adaptive's batch from equal weights).
     */
    private final List<long[]> rows = new ArrayList<>();
    private boolean measuring;
    private boolean firstOfIteration;

    private StripingBench bench;
    private CommunicationScheduler<RdmaTransfer> adaptive;
    /** Adaptive with the common-finish top-up ({@code RailsSpec.commonFinish}), as connections stripe. */
    private CommunicationScheduler<RdmaTransfer> adaptiveCommonFinish;
    private CommunicationScheduler<RdmaTransfer> even;
    private CommunicationScheduler<RdmaTransfer> weighted;
    private CommunicationScheduler<RdmaTransfer> rail0;
    private CommunicationScheduler<RdmaTransfer> rail1;
    private CommunicationScheduler<RdmaTransfer> evenOneInFlight;
    private CommunicationScheduler<RdmaTransfer> rail0OneInFlight;

    @Setup(Level.Trial)
    public void setUp() {
        bench = new StripingBench(StripingBandwidthBenchmark.rates(rails));
        even = bench.scheduler(StripingBandwidthBenchmark.spec("even", inFlight));
        weighted = bench.scheduler(StripingBandwidthBenchmark.spec("weighted", inFlight));
        rail0 = bench.scheduler(StripingBandwidthBenchmark.spec("rail0", inFlight));
        rail1 = bench.scheduler(StripingBandwidthBenchmark.spec("rail1", inFlight));
        evenOneInFlight = bench.scheduler(StripingBandwidthBenchmark.spec("even", 1));
        rail0OneInFlight = bench.scheduler(StripingBandwidthBenchmark.spec("rail0", 1));
    }

    /** A fresh adaptive scheduler (equal weights) for every iteration; the previous one has nothing in flight. */
    @Setup(Level.Iteration)
    public void iteration(IterationParams params) {
        measuring = params.getType() == IterationType.MEASUREMENT;
        adaptive = bench.scheduler(StripingBandwidthBenchmark.spec("adaptive", inFlight));
        adaptiveCommonFinish = bench.scheduler(StripingBandwidthBenchmark.spec("adaptive-common-finish", inFlight));
        firstOfIteration = true;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        System.out.println("WEIGHTS adaptive at the end of the last iteration " + adaptive.metrics().weights()[0] + " / "
            + adaptive.metrics().weights()[1]);
        bench.close();
        String out = System.getProperty("striping.figures.out");
        if (out != null) {
            Files.writeString(Path.of(out), medians(), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
    }

    /**
     * Medians over the measured invocations of each invocation's own ratio: a load spike that hits
     * one policy's batch moves one sample, not the figure. Adaptive also over the first invocation
     * of each iteration alone, the batch that starts from equal weights.
     */
    String medians() {
        StringBuilder sb = new StringBuilder();
        if (rails.equals("4:1")) {
            sb.append("4:1 adaptive ").append(median(r -> (1.0 / r[0]) / (1.0 / r[3] + 1.0 / r[4]))).append('\n');
            sb.append("4:1 adaptive first batch of an iteration (from equal weights) ")
                .append(median(rows.stream().filter(r -> r[7] == 1).toList(), r -> (1.0 / r[0]) / (1.0 / r[3] + 1.0 / r[4])))
                .append('\n');
            sb.append("4:1 adaptive with common finish ").append(median(r -> (1.0 / r[8]) / (1.0 / r[3] + 1.0 / r[4]))).append('\n');
            sb.append("4:1 adaptive with common finish, first batch of an iteration ")
                .append(median(rows.stream().filter(r -> r[7] == 1).toList(), r -> (1.0 / r[8]) / (1.0 / r[3] + 1.0 / r[4])))
                .append('\n');
            sb.append("4:1 even ").append(median(r -> (1.0 / r[1]) / (1.0 / r[3] + 1.0 / r[4]))).append('\n');
            sb.append("4:1 weighted ").append(median(r -> (1.0 / r[2]) / (1.0 / r[3] + 1.0 / r[4]))).append('\n');
        } else {
            sb.append("1:1 bandwidth ").append(median(r -> (double) r[3] / r[1])).append('\n');
            sb.append("1:1 latency ").append(median(r -> (double) r[5] / r[6])).append('\n');
        }
        return sb.toString();
    }

    private double median(java.util.function.ToDoubleFunction<long[]> ratio) {
        return median(rows, ratio);
    }

    private static double median(List<long[]> of, java.util.function.ToDoubleFunction<long[]> ratio) {
        double[] v = of.stream().mapToDouble(ratio).sorted().toArray();
        return v.length == 0 ? Double.NaN : v[v.length / 2];
    }

    /**
     * The rails report to whichever scheduler started them last, so each measured transfer first
     * re-attaches its own scheduler (the previous transfer left nothing in flight).
     */
    private long timed(CommunicationScheduler<RdmaTransfer> s, int messages, long size) {
        bench.attach(s);
        return bench.transfer(s, messages, size);
    }

    @Benchmark
    public void policies(Times t) {
        long[] row = new long[9];
        row[7] = firstOfIteration ? 1 : 0;
        firstOfIteration = false;
        if (rails.equals("4:1")) {
            row[0] = timed(adaptive, BATCH, SIZE);
            row[8] = timed(adaptiveCommonFinish, BATCH, SIZE);
            row[1] = timed(even, BATCH, SIZE);
            row[2] = timed(weighted, BATCH, SIZE);
            row[3] = timed(rail0, BATCH, SIZE);
            row[4] = timed(rail1, BATCH, SIZE);
        } else {
            row[1] = timed(even, BATCH, SIZE);
            row[3] = timed(rail0, BATCH, SIZE);
            row[5] = timed(evenOneInFlight, 1, LARGE);
            row[6] = timed(rail0OneInFlight, 1, LARGE);
        }
        t.adaptiveNs += row[0];
        t.adaptiveCommonFinishNs += row[8];
        t.evenNs += row[1];
        t.weightedNs += row[2];
        t.rail0Ns += row[3];
        t.rail1Ns += row[4];
        t.stripedLatencyNs += row[5];
        t.singleLatencyNs += row[6];
        if (measuring) {
            rows.add(row);
        }
    }
}
