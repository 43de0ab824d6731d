package io.rdmaflux.benchmarks.rsocket;

import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.rsocket.RdmaClientTransport;
import io.rdmaflux.rsocket.RdmaServerTransport;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import io.rsocket.Closeable;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.transport.ClientTransport;
import io.rsocket.transport.ServerTransport;
import io.rsocket.transport.local.LocalClientTransport;
import io.rsocket.transport.local.LocalServerTransport;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.transport.netty.server.CloseableChannel;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.util.DefaultPayload;
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
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * RSocket request-stream over four transports in one run: rsocket-transport-rdmaflux on the in-JVM
 * ({@code rdmafluxMem}) and IP ({@code rdmafluxNet}, RC over TCP on 127.0.0.1) fabrics, and RSocket's own
 * local ({@code local}) and TCP ({@code tcp}, reactor-netty on 127.0.0.1) transports. One op is one payload
 * of a stream of {@value #BATCH} payloads of {@code sizeBytes} bytes, requested unbounded by the client,
 * released on arrival; the benchmark thread spins on the stream's completion.
 *
 * <p>rdmaflux nodes: SHARED progress thread (both nodes on one thread, the best same-JVM setup on a small
 * host), 1 rail, 8 KiB buffers (defaults). RSocket 1.1.5 with its zero-copy payload decoder on both sides.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar 'rsocket.RSocketTransportBenchmark' -f 1 -wi 3 -w 1 -i 5 -r 1}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "-Dchronicle.analytics.disable=true"})
public class RSocketTransportBenchmark {
    static final int BATCH = 10_000;

    @Param({"rdmafluxMem", "rdmafluxNet", "local", "tcp"})
    public String transport;
    @Param({"32", "1024"})
    public int sizeBytes;

    private SoftProvider pa;
    private SoftProvider pb;
    private RdmaNode a;
    private RdmaNode b;
    private Closeable server;
    private RSocket client;
    private Mono<Long> batch;

    @Setup(Level.Trial)
    public void setUp() {
        byte[] data = new byte[sizeBytes];
        SocketAcceptor acceptor = SocketAcceptor.forRequestStream(p -> {
            p.release();
            return Flux.range(0, BATCH).map(i -> DefaultPayload.create(data));
        });
        ServerTransport<? extends Closeable> st;
        java.util.function.Function<Closeable, ClientTransport> ct;
        switch (transport) {
            case "rdmafluxMem", "rdmafluxNet" -> {
                boolean mem = transport.equals("rdmafluxMem");
                if (mem) {
                    SoftFabric fabric = SoftFabric.mem("bench-rsocket");
                    pa = SoftProvider.builder().name("rs-a").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
                    pb = SoftProvider.builder().name("rs-b").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
                } else {
                    NetTransportConfig cfg = NetTransportConfig.builder().address("127.0.0.1").build();
                    pa = NetProviders.builder(cfg).name("rs-net-a").threadingMode(ThreadingMode.INVOKER).build();
                    pb = NetProviders.builder(cfg).name("rs-net-b").threadingMode(ThreadingMode.INVOKER).build();
                }
                a = RdmaNode.builder().provider(pa).name("a").threadingMode(ThreadingMode.SHARED).build();
                b = RdmaNode.builder().provider(pb).name("b").threadingMode(ThreadingMode.SHARED).build();
                st = RdmaServerTransport.create(b, new PortAddress(mem ? "mem" : "net", mem ? pb.devices().get(0).name() : "127.0.0.1", 0));
                ct = s -> RdmaClientTransport.create(a, ((io.rdmaflux.rsocket.RdmaServerChannel) s).address());
            }
            case "local" -> {
                st = LocalServerTransport.create("rdmaflux-rsocket-bench");
                ct = s -> LocalClientTransport.create("rdmaflux-rsocket-bench");
            }
            case "tcp" -> {
                st = TcpServerTransport.create("127.0.0.1", 0);
                ct = s -> TcpClientTransport.create((InetSocketAddress) ((CloseableChannel) s).address());
            }
            default -> throw new IllegalArgumentException("transport " + transport);
        }
        server = RSocketServer.create(acceptor).payloadDecoder(io.rsocket.frame.decoder.PayloadDecoder.ZERO_COPY)
            .bind(st).block(Duration.ofSeconds(10));
        client = RSocketConnector.create().payloadDecoder(io.rsocket.frame.decoder.PayloadDecoder.ZERO_COPY)
            .connect(ct.apply(server)).block(Duration.ofSeconds(10));
        batch = Mono.defer(() -> client.requestStream(DefaultPayload.create(new byte[0])).doOnNext(Payload::release).count());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.dispose();
        server.dispose();
        client.onClose().onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(10));
        if (a != null) {
            a.close();
            b.close();
            pa.close();
            pb.close();
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long requestStream() {
        CompletableFuture<Long> f = batch.toFuture();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!f.isDone()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("a stream of " + BATCH + " took longer than 60 s over " + transport);
            }
            Thread.onSpinWait();
        }
        long n = f.join();
        if (n != BATCH) {
            throw new IllegalStateException(n + " of " + BATCH + " payloads over " + transport);
        }
        return n;
    }
}
