package io.rdmaflux.benchmarks.eager;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Flux;

import java.util.concurrent.TimeUnit;

/**
 * 32-byte message rate, eager RDMA ring vs send/receive, full reactive path (send Flux of a batch, credits,
 * receive Flux, release), both INVOKER nodes on the benchmark thread ({@link EagerPair}) on the in-JVM
 * fabric; messages per second (one op = one message of a {@value #BATCH}-message batch).
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar 'eager.EagerRateBenchmark' -f 1 -wi 3 -i 5 -r 1}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "-Dchronicle.analytics.disable=true"})
public class EagerRateBenchmark {
    static final int BATCH = 10_000;

    @Param({"on", "off"})
    public String eager;

    private EagerPair pair;
    private RdmaConnection client;
    private Flux<RdmaMessage> batch;
    private long received;

    @Setup(Level.Trial)
    public void setUp() {
        pair = new EagerPair("mem", "on".equals(eager), 2560, 512, 64);
        RdmaConnection[] c = pair.connect();
        client = c[0];
        c[1].receive().subscribe(m -> {
            m.release();
            received++;
        });
        batch = EagerPair.batch(BATCH, new byte[32]);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pair.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long batch() {
        long want = received + BATCH;
        client.send(batch).subscribe();
        while (received < want) {
            pair.drive();
        }
        return received;
    }
}
