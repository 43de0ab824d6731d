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
 * The cost of polling idle peers (seed 001 &sect;4.6): {@code idlePeers} idle connections into one server
 * node, every ring in its polling set (eager on) or none (off). {@code idleDutyCycle}: one duty cycle of the
 * server node with nothing arriving, ns (the CPU a progress thread spends per pass: per idle peer, the
 * difference on/off divided by the peers). {@code roundTrip}: 64-byte round trip of one more, active,
 * connection while the idle ones are polled, &micro;s.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar 'eager.EagerPollingCostBenchmark' -f 1 -wi 2 -i 3 -r 1}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "-Dchronicle.analytics.disable=true"})
public class EagerPollingCostBenchmark {
    @Param({"1", "16", "64", "256"})
    public int idlePeers;
    @Param({"on", "off"})
    public String eager;

    private EagerPair pair;
    private Sinks.Many<RdmaMessage> sink;
    private final byte[] payload = new byte[64];
    private long received;

    @Setup(Level.Trial)
    public void setUp() {
        // small buffers: 257 connections per node
        pair = new EagerPair("mem", "on".equals(eager), 256, 4, idlePeers + 1);
        for (int i = 0; i < idlePeers; i++) {
            pair.connect();
        }
        RdmaConnection[] c = pair.connect();
        EagerPair.echo(c[1]);
        c[0].receive().subscribe(m -> {
            m.release();
            received++;
        });
        sink = EagerPair.sender(c[0]);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        sink.tryEmitComplete();
        pair.close();
    }

    /** One pass of the server node over its connections, nothing arriving. */
    @Benchmark
    public int idleDutyCycle() {
        return pair.server.invoke();
    }

    /** One 64-byte round trip on the active connection. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long roundTrip() {
        long want = received + 1;
        sink.tryEmitNext(RdmaMessage.of(payload));
        while (received < want) {
            pair.drive();
        }
        return received;
    }
}
