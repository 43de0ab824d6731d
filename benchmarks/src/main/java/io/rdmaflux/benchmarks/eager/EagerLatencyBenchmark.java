package io.rdmaflux.benchmarks.eager;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Sinks;

import java.util.concurrent.TimeUnit;

/**
 * Round-trip latency of one message, eager RDMA ring vs send/receive (seed 001 &sect;4; the paper's
 * small-message latency figure), through the full reactive path: the client emits one message into its
 * send Flux, the server's receive Flux echoes a copy back, the client's receive Flux gets it and
 * releases it. Both nodes INVOKER, driven by the benchmark thread ({@link EagerPair}), so the figure is
 * the path's CPU cost plus, on {@code net}, loopback TCP. Sample mode: p50 and p99 per size, fabric and
 * kind, in one run (ratios eager/off within the run).
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar 'eager.EagerLatencyBenchmark' -f 1 -wi 3 -i 5 -r 1}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "-Dchronicle.analytics.disable=true"})
public class EagerLatencyBenchmark {
    @Param({"8", "64", "1024"})
    public int sizeBytes;
    @Param({"on", "off"})
    public String eager;
    @Param({"mem", "net"})
    public String fabric;

    private EagerPair pair;
    private Sinks.Many<RdmaMessage> sink;
    private byte[] payload;
    private long received;

    @Setup(Level.Trial)
    public void setUp() {
        pair = new EagerPair(fabric, "on".equals(eager), 2048, 64, 64);
        RdmaConnection[] c = pair.connect();
        EagerPair.echo(c[1]);
        c[0].receive().subscribe(m -> {
            m.release();
            received++;
        });
        sink = EagerPair.sender(c[0]);
        payload = new byte[sizeBytes];
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        sink.tryEmitComplete();
        pair.close();
    }

    /** One round trip. */
    @Benchmark
    public long roundTrip() {
        long want = received + 1;
        sink.tryEmitNext(RdmaMessage.of(payload));
        while (received < want) {
            pair.drive();
        }
        return received;
    }
}
