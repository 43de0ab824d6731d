package io.rdmaflux.benchmarks.striping;

import io.rdmaflux.striping.CommunicationScheduler;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingPolicies;
import io.rdmaflux.striping.verbs.RdmaTransfer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Re-convergence of adaptive striping after a capacity change (seed 000 Fig. 20), real time: two
 * 1 GB/s soft rails carrying 1 MiB messages (8 in flight) with weights settled at 1:1; the
 * measured operation throttles rail 1 to 250 MB/s and runs traffic until the weights are within 5%
 * of the new optimum 4:1 for 10 consecutive updates. The score is that time (target &lt;= 0.5 s).
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar Reconvergence -f1}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(value = 1, jvmArgsAppend = {
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "-Dchronicle.analytics.disable=true"})
public class ReconvergenceBenchmark {
    static final long SIZE = 1 << 20;

    private StripingBench bench;
    private CommunicationScheduler<RdmaTransfer> scheduler;

    @Setup(Level.Invocation)
    public void settle() {
        bench = new StripingBench(1_000_000_000L, 1_000_000_000L);
        scheduler = bench.scheduler(RailsSpec.rails(2).striping(StripingPolicies.adaptive()).maxInFlightMessages(8)
            .switchoverThresholdBytes(0));
        bench.transfer(scheduler, 64, SIZE);
    }

    @TearDown(Level.Invocation)
    public void tearDown() {
        bench.close();
    }

    /** Returns the number of messages it took. */
    @Benchmark
    public int throttleAndFollow() {
        bench.setRate(1, 250_000_000L);
        return followUntil(bench, scheduler, 0.8, 10, 10_000);
    }

    /**
     * Sends 1 MiB messages until {@code stable} consecutive weight updates are within 5% of the
     * ratio {@code target : 1 - target}; returns the messages sent.
     */
    static int followUntil(StripingBench bench, CommunicationScheduler<RdmaTransfer> scheduler, double target, int stable, int limit) {
        int inside = 0;
        int messages = 0;
        double targetRatio = target / (1 - target);
        while (inside < stable) {
            bench.transfer(scheduler, 2, SIZE);
            messages += 2;
            double ratio = scheduler.stripingPolicy().share(0) / scheduler.stripingPolicy().share(1);
            inside = Math.abs(ratio / targetRatio - 1) <= 0.05 ? inside + 1 : 0;
            if (messages > limit) {
                throw new IllegalStateException("no convergence after " + limit + " messages; ratio " + ratio);
            }
        }
        return messages;
    }
}
