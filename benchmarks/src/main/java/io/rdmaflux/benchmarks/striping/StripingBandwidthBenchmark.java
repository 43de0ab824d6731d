package io.rdmaflux.benchmarks.striping;

import io.rdmaflux.striping.CommunicationScheduler;
import io.rdmaflux.striping.MultiplexingPolicies;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingPolicies;
import io.rdmaflux.striping.verbs.RdmaTransfer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Bandwidth of 1 MiB messages over two token-bucket shaped soft rails, real time (seed 000 §6.2
 * Fig. 7 and §6.3 Fig. 18). {@code rails}: {@code 4:1} is 1 GB/s + 250 MB/s, {@code 1:1} is 2 x
 * 500 MB/s. {@code policy}: {@code adaptive} (from equal weights, no a-priori knowledge),
 * {@code even}, {@code weighted} (4:1), {@code rail0}/{@code rail1} (every message on one rail: the
 * single-rail references). Ops/s x 1 MiB = bandwidth; the figures are ratios within one run:
 * adaptive / (rail0 + rail1) on 4:1 (target &gt;= 0.98), even / rail0 on 1:1 (target &gt;= 1.95).
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar StripingBandwidth -f1 -wi 2 -i 3 -w 1s -r 1s},
 * or {@code StripingFigures} for the ratios.
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
public class StripingBandwidthBenchmark {
    static final int BATCH = 32;
    static final long SIZE = 1 << 20;

    @Param({"4:1", "1:1"})
    public String rails;

    @Param({"adaptive", "even", "weighted", "rail0", "rail1"})
    public String policy;

    @Param({"1"})
    public int inFlight;

    private StripingBench bench;
    private CommunicationScheduler<RdmaTransfer> scheduler;

    static long[] rates(String rails) {
        return switch (rails) {
            case "4:1" -> new long[] {400_000_000L, 100_000_000L};
            case "1:1" -> new long[] {250_000_000L, 250_000_000L};
            case "4:1-low" -> new long[] {200_000_000L, 50_000_000L};
            default -> throw new IllegalArgumentException("rails must be 4:1 or 1:1 but it was " + rails);
        };
    }

    static RailsSpec spec(String policy, int inFlight) {
        RailsSpec spec = RailsSpec.rails(2).maxInFlightMessages(inFlight).switchoverThresholdBytes(64 * 1024);
        return switch (policy) {
            case "adaptive" -> spec.striping(StripingPolicies.adaptive());
            case "adaptive-common-finish" -> spec.striping(StripingPolicies.adaptive()).commonFinish(true);
            case "adaptive-per-message" -> spec.striping(StripingPolicies.adaptive(StripingPolicies.DEFAULT_ALPHA,
                java.time.Duration.ZERO, StripingPolicies.DEFAULT_MIN_SHARE, 1, 1));
            case "adaptive-0.2" -> spec.striping(StripingPolicies.adaptive(0.2));
            case "adaptive-0.1" -> spec.striping(StripingPolicies.adaptive(0.1));
            case "even" -> spec.striping(StripingPolicies.even());
            case "weighted" -> spec.striping(StripingPolicies.weighted(4, 1));
            case "rail0" -> spec.multiplexing(MultiplexingPolicies.binding(0)).switchoverThresholdBytes(Long.MAX_VALUE);
            case "rail1" -> spec.multiplexing(MultiplexingPolicies.binding(1)).switchoverThresholdBytes(Long.MAX_VALUE);
            default -> throw new IllegalArgumentException("unknown policy " + policy);
        };
    }

    @Setup(Level.Trial)
    public void setUp() {
        bench = new StripingBench(rates(rails));
        scheduler = bench.scheduler(spec(policy, inFlight));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        System.out.println("WEIGHTS " + policy + " " + scheduler.metrics().weights()[0] + " / " + scheduler.metrics().weights()[1]
            + ", bytes " + java.util.Arrays.toString(scheduler.metrics().railBytes()));
        bench.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long megabyteMessages() {
        return bench.transfer(scheduler, BATCH, SIZE);
    }
}
