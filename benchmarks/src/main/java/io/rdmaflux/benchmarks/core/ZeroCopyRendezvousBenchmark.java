package io.rdmaflux.benchmarks.core;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.RendezvousMode;
import io.rdmaflux.striping.connection.RailsChannelFactory;
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
 * 1 MiB messages from application direct buffers, full reactive path on the in-JVM soft fabric (SHARED
 * progress thread): sent by reference through the node's registration cache (seed 001 &sect;3.1's
 * pin-down cache) or staged by a copy (cache budget 0), by the WRITE or the READ rendezvous, over 1 rail
 * or 2 rails striped evenly (rail-striping's {@code RailsChannelFactory.even()} on both sides, so the
 * receiver's READs are striped too).
 *
 * <p>One operation sends a batch of 100 messages and waits until all arrived: scores are batches/s
 * (MiB/s = score &times; 100). {@code buffers} is how many user buffers the batch rotates over: 1 (the
 * same buffer every time: one registration, every later send a cache hit) or 16 (16 MiB rotating, all
 * inside the 64 MiB default budget: 16 misses at the first batch, hits after). The reference
 * {@code memcpy} makes the same number of 1 MiB copies from the same rotating sources into one
 * destination, what the staging copy costs alone.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar 'core.ZeroCopyRendezvousBenchmark' -f 1 -wi 2 -i 3}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED", "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "-Dchronicle.analytics.disable=true",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED"})
public class ZeroCopyRendezvousBenchmark {
    static final int SIZE = 1 << 20;
    static final int BATCH = 100;

    /** User buffers the batch rotates over. */
    @Param({"1", "16"})
    public int buffers;
    /** Registration cache budget: 64 MiB (by reference) or 0 (staging copy). */
    @Param({"67108864", "0"})
    public long cacheBytes;
    @Param({"WRITE", "READ"})
    public String mode;
    @Param({"1", "2"})
    public int rails;

    private SoftProvider pa;
    private SoftProvider pb;
    private RdmaNode a;
    private RdmaNode b;
    private RdmaConnection client;
    private final AtomicLong received = new AtomicLong();
    private ByteBuffer[] sources;
    private UnsafeBuffer[] sourceViews;
    private UnsafeBuffer dst;

    @Setup(Level.Trial)
    public void setUp() {
        SoftFabric fabric = SoftFabric.mem("bench-zerocopy");
        pa = SoftProvider.builder().name("zc-a").fabric(fabric).portsPerDevice(rails).threadingMode(ThreadingMode.INVOKER).build();
        pb = SoftProvider.builder().name("zc-b").fabric(fabric).portsPerDevice(rails).threadingMode(ThreadingMode.INVOKER).build();
        int[] ports = rails == 1 ? new int[] {1} : new int[] {1, 2};
        a = node(pa, "a", ports);
        b = node(pb, "b", ports);
        RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
        ConnectionSpec spec = ConnectionSpec.rails(rails).rendezvous(RendezvousMode.valueOf(mode));
        if (rails > 1) {
            spec = spec.striping(RailsChannelFactory.even());
        }
        client = a.connect(server.address(), spec).block(Duration.ofSeconds(10));
        RdmaConnection s = server.accept().blockFirst(Duration.ofSeconds(10));
        s.receive().subscribe(m -> {
            m.release();
            received.incrementAndGet();
        });
        sources = new ByteBuffer[buffers];
        sourceViews = new UnsafeBuffer[buffers];
        for (int i = 0; i < buffers; i++) {
            sources[i] = ByteBuffer.allocateDirect(SIZE);
            sourceViews[i] = new UnsafeBuffer(sources[i]);
        }
        dst = new UnsafeBuffer(ByteBuffer.allocateDirect(SIZE));
    }

    private RdmaNode node(SoftProvider p, String name, int[] ports) {
        RdmaNode.Builder nb = RdmaNode.builder().provider(p).name(name).ports(ports).bufferBytes(64 * 1024).receiveBuffers(128)
            .sendBuffers(128).maxMessageBytes(SIZE).rendezvousBuffers(8).registrationCacheBytes(cacheBytes)
            .threadingMode(ThreadingMode.SHARED);
        if (rails > 1) {
            nb.acceptChannelFactory(RailsChannelFactory.even());
        }
        return nb.build();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        a.close();
        b.close();
        pa.close();
        pb.close();
    }

    /** One batch of 100 messages of 1 MiB from the rotating direct buffers, send Flux to receive Flux. */
    @Benchmark
    public long rdmaflux() {
        long target = received.get() + BATCH;
        ByteBuffer[] src = sources;
        client.send(Flux.range(0, BATCH).map(i -> RdmaMessage.of(src[i % src.length]))).block(Duration.ofSeconds(60));
        while (received.get() < target) {
            Thread.onSpinWait();
        }
        return BATCH;
    }

    /** The same number of 1 MiB copies from the rotating sources into one destination: the memcpy reference. */
    @Benchmark
    public long memcpy() {
        UnsafeBuffer[] src = sourceViews;
        for (int i = 0; i < BATCH; i++) {
            dst.putBytes(0, src[i % src.length], 0, SIZE);
        }
        return dst.getByte(0);
    }
}
