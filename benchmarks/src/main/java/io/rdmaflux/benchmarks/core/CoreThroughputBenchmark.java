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
 * {@code memcpy} is the reference measured in the same run (same sizes, one copy into a direct buffer).
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

    @Param({"32", "4096", "1048576"})
    public int sizeBytes;
    /** Rendezvous message buffers per node: large messages in flight at once. */
    @Param({"8"})
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
            .maxMessageBytes(2 << 20).rendezvousBuffers(rendezvousBuffers).threadingMode(ThreadingMode.valueOf(threading)).build();
        b = RdmaNode.builder().provider(pb).name("b").bufferBytes(buffer).receiveBuffers(128).sendBuffers(128)
            .maxMessageBytes(2 << 20).rendezvousBuffers(rendezvousBuffers).threadingMode(ThreadingMode.valueOf(threading)).build();
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

    /** Messages per second through send Flux → receive Flux (multiply by size for bytes/s). */
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
}
