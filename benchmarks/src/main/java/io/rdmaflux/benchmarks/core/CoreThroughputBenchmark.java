package io.rdmaflux.benchmarks.core;

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
import org.agrona.concurrent.UnsafeBuffer;
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
import reactor.core.publisher.Flux;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Full-path message rate and bulk throughput of reactive-core on the in-JVM soft fabric: a send
 * Flux on one node to a receive Flux on another, with credits and release, SHARED or DEDICATED progress threads.
 *
 * <p>Scores are <b>batches</b> per second: one operation moves a batch of 10 000 messages of 32 B, 2 000
 * of 4 KiB or 100 of 1 MiB (messages/s = score &times; batch, bytes/s = that &times; size). Ratios between
 * methods of the same size compare like with like. Two references are measured in the same run:
 * <ul>
 *   <li>{@code memcpy}: the same number of copies of the same size from one direct buffer into one other
 *       (source and destination stay in the core's L2 cache at 1 MiB: the strictest reference);</li>
 *   <li>{@code memcpyPool}: the same copies into {@code rendezvousBuffers} destinations laid out as the
 *       receiver's rendezvous pool ({@code maxMessageBytes} apart), taken in turn. This is the copy the
 *       transport cannot avoid: with {@code n} messages in flight the NIC writes into {@code n} different
 *       receive buffers, and from 2 on (3 MiB with the source) they no longer fit a 2 MiB L2, which costs
 *       a quarter to a third of the copy's speed on this machine whatever the protocol does.</li>
 * </ul>
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar 'core.CoreThroughputBenchmark' -f 1 -wi 2 -i 3}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED", "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "-Dchronicle.analytics.disable=true",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED"})
public class CoreThroughputBenchmark {
    static final int BATCH = 10_000;
    /** The nodes' maximum message size: the size of one rendezvous buffer. */
    static final int MAX_MESSAGE_BYTES = 2 << 20;

    @Param({"32", "4096", "1048576"})
    public int sizeBytes;
    /** Rendezvous message buffers per node: large messages in flight at once. */
    @Param({"1", "8"})
    public int rendezvousBuffers;
    /** SHARED: both nodes on one progress thread; DEDICATED: a thread per node (see MessageRateBenchmark). */
    @Param({"SHARED", "DEDICATED"})
    public String threading;

    private SoftProvider pa;
    private SoftProvider pb;
    private RdmaNode a;
    private RdmaNode b;
    private RdmaConnection client;
    private final AtomicLong received = new AtomicLong();
    private byte[] payload;
    private UnsafeBuffer src;
    private UnsafeBuffer dst;
    private UnsafeBuffer[] poolDst;
    private io.rdmaflux.verbs.MemoryRegion registered;

    @Setup(Level.Trial)
    public void setUp() {
        SoftFabric fabric = SoftFabric.mem("bench-core");
        // providers driven by their nodes' progress threads: two threads on a 2-core host, not four
        pa = SoftProvider.builder().name("bench-a").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        pb = SoftProvider.builder().name("bench-b").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        int buffer = sizeBytes >= 4096 ? 64 * 1024 : 256;
        // 1 MiB messages go by rendezvous: 8 message buffers of 2 MiB per node and direction keep 8 in flight
        a = RdmaNode.builder().provider(pa).name("a").bufferBytes(buffer).receiveBuffers(128).sendBuffers(128)
            .maxMessageBytes(MAX_MESSAGE_BYTES).rendezvousBuffers(rendezvousBuffers).threadingMode(ThreadingMode.valueOf(threading))
            // the RC send/receive path this suite has always measured (eager rings: benchmarks.eager)
            .eager(EagerSpec.OFF).build();
        b = RdmaNode.builder().provider(pb).name("b").bufferBytes(buffer).receiveBuffers(128).sendBuffers(128)
            .maxMessageBytes(MAX_MESSAGE_BYTES).rendezvousBuffers(rendezvousBuffers).threadingMode(ThreadingMode.valueOf(threading))
            // the RC send/receive path this suite has always measured (eager rings: benchmarks.eager)
            .eager(EagerSpec.OFF).build();
        RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
        client = a.connect(server.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
        RdmaConnection s = server.accept().blockFirst(Duration.ofSeconds(10));
        s.receive().subscribe(m -> {
            m.release();
            received.incrementAndGet();
        });
        payload = new byte[sizeBytes];
        src = new UnsafeBuffer(ByteBuffer.allocateDirect(sizeBytes));
        registered = a.registerMemory(ByteBuffer.allocateDirect(sizeBytes));
        dst = new UnsafeBuffer(ByteBuffer.allocateDirect(sizeBytes));
        ByteBuffer pool = ByteBuffer.allocateDirect(rendezvousBuffers * MAX_MESSAGE_BYTES);
        poolDst = new UnsafeBuffer[rendezvousBuffers];
        for (int i = 0; i < rendezvousBuffers; i++) {
            poolDst[i] = new UnsafeBuffer(pool, i * MAX_MESSAGE_BYTES, sizeBytes);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        a.close();
        b.close();
        pa.close();
        pb.close();
    }

    private int batch() {
        return sizeBytes >= 1 << 20 ? 100 : sizeBytes >= 4096 ? 2_000 : BATCH;
    }

    /** One batch through send Flux → receive Flux (see the class Javadoc for the batch sizes). */
    @Benchmark
    public long rdmaflux() {
        int n = batch();
        long target = received.get() + n;
        client.send(Flux.range(0, n).map(i -> RdmaMessage.of(payload))).block(Duration.ofSeconds(60));
        while (received.get() < target) {
            Thread.onSpinWait();
        }
        return n;
    }

    /**
     * As {@link #rdmaflux()} with the payload in memory registered with the node: large messages are
     * RDMA-written from it with no staging copy (the one copy is the soft NIC's).
     */
    @Benchmark
    public long rdmafluxRegistered() {
        int n = batch();
        long target = received.get() + n;
        client.send(Flux.range(0, n).map(i -> RdmaMessage.of(registered, 0, sizeBytes))).block(Duration.ofSeconds(60));
        while (received.get() < target) {
            Thread.onSpinWait();
        }
        return n;
    }

    /** The same number of copies of the same size into a direct buffer: the memcpy reference. */
    @Benchmark
    public long memcpy() {
        int n = batch();
        for (int i = 0; i < n; i++) {
            dst.putBytes(0, src, 0, sizeBytes);
        }
        return dst.getByte(0);
    }

    /** As {@link #memcpy()}, into the receiver's pool layout: destination {@code i % rendezvousBuffers}. */
    @Benchmark
    public long memcpyPool() {
        int n = batch();
        UnsafeBuffer[] d = poolDst;
        for (int i = 0; i < n; i++) {
            d[i % d.length].putBytes(0, src, 0, sizeBytes);
        }
        return d[0].getByte(0);
    }
}
