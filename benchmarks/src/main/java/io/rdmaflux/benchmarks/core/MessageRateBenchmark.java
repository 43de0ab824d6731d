package io.rdmaflux.benchmarks.core;

import io.rdmaflux.benchmarks.AeronLoop;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.SocketAcceptor;
import io.rsocket.transport.local.LocalClientTransport;
import io.rsocket.transport.local.LocalServerTransport;
import io.rsocket.util.DefaultPayload;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * 32-byte message rate, in messages per second (one JMH op = one message), three ways in one run:
 * <ul>
 *   <li>{@code rdmaflux}: reactive-core's full path on the in-JVM soft fabric, send Flux on one
 *       node to the receive Flux of another, with credits and release, SHARED (one progress thread for both nodes) or DEDICATED (one per node), idling as the node does by default ({@link #idle});</li>
 *   <li>{@code rsocketLocal}: RSocket-java 1.1.5 request-stream over its local transport;</li>
 *   <li>{@code aeronIpc}: Aeron 1.50 IPC through an embedded media driver (its directory under
 *       {@code java.io.tmpdir}, deleted at tear-down), offer and poll on the benchmark thread.</li>
 * </ul>
 * Targets (issue 4): rdmaflux &ge; 10&times; rsocketLocal and &ge; 0.30&times; aeronIpc.
 *
 * <p>One op is a batch of {@value #BATCH} messages; {@link #await} says how the benchmark thread waits
 * for each batch's completion, the same way for rdmaflux and RSocket. {@code spin} busy-waits on the
 * {@code Mono}'s future, as the Aeron case polls: it measures the libraries. {@code block} parks in
 * {@code Mono.block()}: the thread completing the batch then wakes the benchmark thread (a futex
 * wake) and the next batch starts only once the benchmark thread is running again, a gap of about
 * 60 &micro;s per batch on the 2-vCPU development VM that costs rdmaflux some 15% of its rate (a batch
 * takes about 400 &micro;s) and RSocket 2&ndash;3%.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar 'core.MessageRateBenchmark' -f 1 -wi 2 -w 1 -i 3 -r 1}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "-Dchronicle.analytics.disable=true"})
public class MessageRateBenchmark {
    static final int BATCH = 10_000;
    static final int SIZE = 32;

    private SoftProvider pa;
    private SoftProvider pb;
    private RdmaNode a;
    private RdmaNode b;
    private RdmaConnection client;
    private final AtomicLong received = new AtomicLong();
    private final byte[] payload = new byte[SIZE];
    private Flux<RdmaMessage> batch;

    private Disposable rsocketServer;
    private RSocket rsocket;
    private Mono<Long> rsocketBatch;

    private AeronLoop aeronLoop;

    /**
     * SHARED: both nodes' connections on one progress thread (the best same-JVM configuration on a small
     * host: no hand-over between cores); DEDICATED: one progress thread per node.
     */
    @Param({"SHARED", "DEDICATED"})
    public String threading;
    /** How the benchmark thread waits for a batch: {@code spin} on its future, or {@code block} (park). */
    @Param({"spin", "block"})
    public String await;
    /**
     * How a DEDICATED progress thread idles: {@code default} is the node's own (spin, yield, then wait in
     * the provider: a frame pushed to the node's NIC wakes it), {@code backoff} Agrona's
     * {@code BackoffIdleStrategy} (parks up to 1 ms, only a send or release from outside wakes it).
     */
    @Param({"default"})
    public String idle;
    /** DATA receive (and send) buffers per node: the message window, since message credits never exceed the buffers. */
    @Param({"512"})
    public int receiveBuffers;
    /** 2560 B holds a packed frame of 64 messages of 32 B (4-byte length prefix each). */
    @Param({"2560"})
    public int bufferBytes;
    /** {@code RdmaNode.Builder.messageCreditsPerBuffer}: message credits granted per free receive buffer (the library's default 8). */
    @Param({"8"})
    public int creditsPerBuffer;

    private RdmaNode node(SoftProvider p, String name) {
        IdleStrategy is = switch (idle) {
            case "default" -> null;
            case "backoff" -> new BackoffIdleStrategy();
            case "spin" -> new BackoffIdleStrategy(1000, 100, 1000, 50_000);
            case "busy" -> new BusySpinIdleStrategy();
            case "yield" -> new YieldingIdleStrategy();
            default -> throw new IllegalArgumentException(idle);
        };
        RdmaNode.Builder b = RdmaNode.builder().provider(p).name(name).bufferBytes(bufferBytes).receiveBuffers(receiveBuffers)
            .sendBuffers(receiveBuffers).sendQueue(64).messageCreditsPerBuffer(creditsPerBuffer).threadingMode(ThreadingMode.valueOf(threading))
            // the RC send/receive path this suite has always measured (eager rings: benchmarks.eager)
            .eager(EagerSpec.OFF);
        return (is == null ? b : b.idleStrategy(is)).build();
    }

    @Setup(Level.Trial)
    public void setUp() {
        SoftFabric fabric = SoftFabric.mem("bench-rate");
        pa = SoftProvider.builder().name("rate-a").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        pb = SoftProvider.builder().name("rate-b").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        a = node(pa, "a");
        b = node(pb, "b");
        RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
        client = a.connect(server.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
        RdmaConnection s = server.accept().blockFirst(Duration.ofSeconds(10));
        s.receive().subscribe(m -> {
            m.release();
            received.lazySet(received.get() + 1);
        });
        batch = Flux.range(0, BATCH).map(i -> RdmaMessage.of(payload));

        rsocketServer = RSocketServer.create(SocketAcceptor.forRequestStream(p -> {
                p.release();
                return Flux.range(0, BATCH).map(i -> DefaultPayload.create(payload));
            }))
            .bind(LocalServerTransport.create("rdmaflux-bench")).block();
        rsocket = RSocketConnector.connectWith(LocalClientTransport.create("rdmaflux-bench")).block();
        rsocketBatch = Mono.defer(() -> rsocket.requestStream(DefaultPayload.create(new byte[0]))
            .doOnNext(Payload::release).count());

        aeronLoop = new AeronLoop("aeron-bench", "aeron:ipc", 1001, SIZE, 8 << 20);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.close();
        a.close();
        b.close();
        pa.close();
        pb.close();
        rsocket.dispose();
        rsocketServer.dispose();
        aeronLoop.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long rdmaflux() {
        long target = received.get() + BATCH;
        await(client.send(batch));
        while (received.get() < target) {
            Thread.onSpinWait();
        }
        return target;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long rsocketLocal() {
        return await(rsocketBatch);
    }

    private <T> T await(Mono<T> batch) {
        if (!"spin".equals(await)) {
            return batch.block(Duration.ofSeconds(60));
        }
        CompletableFuture<T> f = batch.toFuture();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!f.isDone()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("a batch took longer than 60 s");
            }
            Thread.onSpinWait();
        }
        return f.join();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long aeronIpc() {
        return aeronLoop.batch(BATCH);
    }
}
