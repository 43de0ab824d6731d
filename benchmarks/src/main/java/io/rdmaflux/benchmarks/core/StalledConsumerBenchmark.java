package io.rdmaflux.benchmarks.core;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.annotations.Setup;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory held by a sender whose consumer stalls: the receiver requests {@value #DEMAND} messages
 * and never more; the sender's publisher is unbounded. After 200 ms of real time the benchmark
 * reports, as JMH auxiliary counters, the messages taken from the publisher and not consumed
 * ({@code heldBySender}, which must stay &le; credits + send queue) beside that bound
 * ({@code boundCreditsPlusQueue} = credits the sender holds + its send queue; with the demand used up the
 * credits are 0, so the bound is the send queue), and {@code excessOverBound}, which must be 0.
 * JMH sums event counters over the measurement iterations in its summary row: the per-iteration
 * values are its (min, avg, max) line.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar 'core.StalledConsumerBenchmark' -f 1 -wi 1 -i 3}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 3)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "-Dchronicle.analytics.disable=true"})
public class StalledConsumerBenchmark {
    static final int DEMAND = 16;
    static final int SEND_QUEUE = 16;

    /** The measured bound, reported by JMH beside the score. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Held {
        public long heldBySender;
        public long boundCreditsPlusQueue;
        /** Messages held beyond the bound: 0 in every iteration when backpressure holds. */
        public long excessOverBound;
    }

    private SoftProvider pa;
    private SoftProvider pb;
    private RdmaNode a;
    private RdmaNode b;
    private RdmaConnection client;
    private RdmaConnection server;

    @Setup(Level.Iteration)
    public void setUp() {
        SoftFabric fabric = SoftFabric.mem("bench-stall-" + System.nanoTime());
        pa = SoftProvider.builder().name("stall-a").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        pb = SoftProvider.builder().name("stall-b").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        a = RdmaNode.builder().provider(pa).name("sa").receiveBuffers(256).sendQueue(SEND_QUEUE).build();
        b = RdmaNode.builder().provider(pb).name("sb").receiveBuffers(256).sendQueue(SEND_QUEUE).build();
        RdmaServer s = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
        client = a.connect(s.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
        server = s.accept().blockFirst(Duration.ofSeconds(10));
    }

    @TearDown(Level.Iteration)
    public void tearDown() {
        a.close();
        b.close();
        pa.close();
        pb.close();
    }

    @Benchmark
    public long stalledConsumer(Held held) throws InterruptedException {
        AtomicLong emitted = new AtomicLong();
        AtomicLong consumed = new AtomicLong();
        server.receive().subscribe(new BaseSubscriber<RdmaMessage>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                s.request(DEMAND);
            }

            @Override
            protected void hookOnNext(RdmaMessage m) {
                m.release();
                consumed.incrementAndGet();
            }
        });
        Disposable send = client.send(Flux.<RdmaMessage>generate(sink -> {
            emitted.incrementAndGet();
            sink.next(RdmaMessage.of(new byte[64]));
        })).subscribe(null, e -> { });
        Thread.sleep(200);
        held.heldBySender = emitted.get() - consumed.get();
        held.boundCreditsPlusQueue = client.metrics().sendCredits() + SEND_QUEUE;
        held.excessOverBound = Math.max(0, held.heldBySender - held.boundCreditsPlusQueue);
        send.dispose();
        return held.heldBySender;
    }
}
