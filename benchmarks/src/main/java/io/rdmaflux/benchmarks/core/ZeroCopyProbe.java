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
import reactor.core.publisher.Flux;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The rows of {@link ZeroCopyRendezvousBenchmark}, interleaved in one process so that a loaded machine
 * slows every row alike: each round runs every variant once (100 messages of 1 MiB, send Flux to
 * receive Flux, SHARED progress thread) and the memcpy reference, in turn; the table gives each
 * variant's median over the rounds in MiB/s and its ratio to memcpy. Variants: cache on (64 MiB) or
 * staging copy (cache 0), from the same buffer or 16 rotating ones, WRITE or READ, 1 rail or 2 rails
 * striped evenly ({@code RailsChannelFactory.even()} on both sides).
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.core.ZeroCopyProbe 15}
 * (the argument: rounds).
 */
public final class ZeroCopyProbe {
    private static final int SIZE = 1 << 20;
    private static final int BATCH = 100;

    private ZeroCopyProbe() {
    }

    /** One connection between two nodes of its own. */
    private static final class Pair implements AutoCloseable {
        final SoftProvider pa;
        final SoftProvider pb;
        final RdmaNode a;
        final RdmaNode b;
        final RdmaConnection client;
        final AtomicLong received = new AtomicLong();

        Pair(String name, int rails, long cacheBytes, RendezvousMode mode) {
            SoftFabric fabric = SoftFabric.mem("probe-" + name);
            pa = SoftProvider.builder().name(name + "-a").fabric(fabric).portsPerDevice(rails).threadingMode(ThreadingMode.INVOKER).build();
            pb = SoftProvider.builder().name(name + "-b").fabric(fabric).portsPerDevice(rails).threadingMode(ThreadingMode.INVOKER).build();
            int[] ports = rails == 1 ? new int[] {1} : new int[] {1, 2};
            a = node(pa, name + "-a", ports, cacheBytes, rails);
            b = node(pb, name + "-b", ports, cacheBytes, rails);
            RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
            ConnectionSpec spec = ConnectionSpec.rails(rails).rendezvous(mode);
            if (rails > 1) {
                spec = spec.striping(RailsChannelFactory.even());
            }
            client = a.connect(server.address(), spec).block(Duration.ofSeconds(10));
            server.accept().blockFirst(Duration.ofSeconds(10)).receive().subscribe(m -> {
                m.release();
                received.incrementAndGet();
            });
        }

        private static RdmaNode node(SoftProvider p, String name, int[] ports, long cacheBytes, int rails) {
            RdmaNode.Builder nb = RdmaNode.builder().provider(p).name(name).ports(ports).bufferBytes(64 * 1024).receiveBuffers(128)
                .sendBuffers(128).maxMessageBytes(SIZE).rendezvousBuffers(8).registrationCacheBytes(cacheBytes)
                .threadingMode(ThreadingMode.SHARED);
            if (rails > 1) {
                nb.acceptChannelFactory(RailsChannelFactory.even());
            }
            return nb.build();
        }

        /** @return ns for one batch */
        long batch(ByteBuffer[] sources) {
            long target = received.get() + BATCH;
            long t0 = System.nanoTime();
            client.send(Flux.range(0, BATCH).map(i -> RdmaMessage.of(sources[i % sources.length]))).block(Duration.ofSeconds(60));
            while (received.get() < target) {
                Thread.onSpinWait();
            }
            return System.nanoTime() - t0;
        }

        @Override
        public void close() {
            a.close();
            b.close();
            pa.close();
            pb.close();
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        ByteBuffer[] one = {ByteBuffer.allocateDirect(SIZE)};
        ByteBuffer[] sixteen = new ByteBuffer[16];
        for (int i = 0; i < sixteen.length; i++) {
            sixteen[i] = ByteBuffer.allocateDirect(SIZE);
        }
        Map<String, Pair> pairs = new LinkedHashMap<>();
        for (int rails : new int[] {1, 2}) {
            for (RendezvousMode mode : new RendezvousMode[] {RendezvousMode.WRITE, RendezvousMode.READ}) {
                for (long cache : new long[] {64L << 20, 0}) {
                    String key = mode + " " + rails + "r " + (cache > 0 ? "cache" : "staged");
                    pairs.put(key, new Pair(key.replace(' ', '-'), rails, cache, mode));
                }
            }
        }
        UnsafeBuffer dst = new UnsafeBuffer(ByteBuffer.allocateDirect(SIZE));
        UnsafeBuffer[] srcOne = {new UnsafeBuffer(one[0])};
        UnsafeBuffer[] srcSixteen = new UnsafeBuffer[16];
        for (int i = 0; i < 16; i++) {
            srcSixteen[i] = new UnsafeBuffer(sixteen[i]);
        }
        Map<String, List<Long>> ns = new LinkedHashMap<>();
        for (int r = -2; r < rounds; r++) {
            for (Map.Entry<String, Pair> e : pairs.entrySet()) {
                record(ns, e.getKey() + " same", e.getValue().batch(one), r);
                record(ns, e.getKey() + " rot16", e.getValue().batch(sixteen), r);
            }
            record(ns, "memcpy same", memcpy(srcOne, dst), r);
            record(ns, "memcpy rot16", memcpy(srcSixteen, dst), r);
        }
        double memSame = median(ns.get("memcpy same"));
        double memRot = median(ns.get("memcpy rot16"));
        System.out.printf("%-28s %10s %10s%n", "variant (100 x 1 MiB)", "MiB/s", "x memcpy");
        for (Map.Entry<String, List<Long>> e : ns.entrySet()) {
            double m = median(e.getValue());
            double ref = e.getKey().endsWith("same") ? memSame : memRot;
            System.out.printf("%-28s %10.0f %10.3f%n", e.getKey(), BATCH * 1e9 / m, ref / m);
        }
        pairs.values().forEach(Pair::close);
    }

    private static long memcpy(UnsafeBuffer[] src, UnsafeBuffer dst) {
        long t0 = System.nanoTime();
        for (int i = 0; i < BATCH; i++) {
            dst.putBytes(0, src[i % src.length], 0, SIZE);
        }
        return System.nanoTime() - t0;
    }

    private static void record(Map<String, List<Long>> ns, String key, long v, int round) {
        if (round >= 0) {
            ns.computeIfAbsent(key, k -> new ArrayList<>()).add(v);
        }
    }

    private static double median(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        s.sort(null);
        return s.get(s.size() / 2);
    }
}
