package io.rdmaflux.benchmarks.striping;

import io.rdmaflux.striping.CommunicationScheduler;
import io.rdmaflux.striping.verbs.RdmaTransfer;
import java.util.concurrent.TimeUnit;
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

/**
 * Latency of one large message (4 MiB, one in flight) on two equal 500 MB/s soft rails, striped
 * evenly vs on one rail (seed 000 §6.2 Fig. 5: about half). Figure: {@code even / rail0}.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar StripingLatency -f1 -wi 2 -i 3 -w 1s -r 1s}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "-Dchronicle.analytics.disable=true"})
public class StripingLatencyBenchmark {
    static final long SIZE = 4 << 20;

    @Param({"even", "rail0"})
    public String policy;

    private StripingBench bench;
    private CommunicationScheduler<RdmaTransfer> scheduler;

    @Setup(Level.Trial)
    public void setUp() {
        bench = new StripingBench(500_000_000L, 500_000_000L);
        scheduler = bench.scheduler(StripingBandwidthBenchmark.spec(policy, 1));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        bench.close();
    }

    @Benchmark
    public long largeMessage() {
        return bench.transfer(scheduler, 1, SIZE);
    }
}
