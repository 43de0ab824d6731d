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
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Rate with many ACTIVE connections (issue 15): 32 B message rate and 1 MiB throughput with 1, 64 or 256
 * connections carrying traffic at once, between two DEDICATED nodes of the in-JVM fabric (INVOKER soft
 * providers driven by the nodes, RC send/receive rails as in {@link ManyPeersProbe}), per mode:
 * <ul>
 *   <li>{@code per-connection}: the defaults, a CQ and registered pools per connection and rail;</li>
 *   <li>{@code SRQ + one CQ}: {@code sharedReceiveQueue(ManyPeersProbe.srqBuffers(256))} and
 *       {@code sharedCompletionQueue(1024)}, default windows.</li>
 * </ul>
 * Each mode's node pair opens as many connections as the largest active count (all of them stay open);
 * a cell uses the first {@code K}: batches of messages spread evenly over the K connections, all K sends
 * subscribed at once, until the cell's time is up; the rate is messages received over the wall time.
 * Rounds alternate the order of the modes; the ratio is the K = max over the K = 1 rate of the same mode.
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -Xmx8g -XX:MaxDirectMemorySize=8g -cp benchmarks/target/benchmarks.jar
 * io.rdmaflux.benchmarks.core.ActiveConnectionsProbe [seconds-per-cell] [rounds] [K...]} (default 3 2 1 64 256)
 */
public final class ActiveConnectionsProbe {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String[] MODES = {"per-connection", "SRQ + one CQ"};
    private static final int[] SIZES = {32, 1 << 20};

    private ActiveConnectionsProbe() {
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int[] ks = args.length > 2 ? java.util.Arrays.stream(args, 2, args.length).mapToInt(Integer::parseInt).toArray()
            : new int[] {1, 64, 256};
        int maxK = java.util.Arrays.stream(ks).max().orElseThrow();
        System.out.println("load before: " + uptime());
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        for (int r = 0; r < rounds; r++) {
            for (int mi = 0; mi < MODES.length; mi++) {
                String mode = MODES[(mi + r) % MODES.length];
                try (Pair p = new Pair(mode, maxK)) {
                    // untimed warm-up of both paths on this pair
                    p.measure(Math.min(maxK, 8), 32, 0.5);
                    p.measure(Math.min(maxK, 8), 1 << 20, 0.5);
                    for (int size : SIZES) {
                        for (int k : ks) {
                            double rate = p.measure(k, size, seconds);
                            rates.computeIfAbsent(key(mode, size, k), x -> new ArrayList<>()).add(rate);
                            System.out.printf("round %d %-15s %8d B K=%4d %,14.0f msg/s%n", r + 1, mode, size, k, rate);
                        }
                    }
                }
            }
        }
        System.out.println("load after: " + uptime());
        Thread.sleep(200);
        List<String> left = Thread.getAllStackTraces().keySet().stream().map(Thread::getName).filter(n -> n.startsWith("rdmaflux")).toList();
        System.out.println("rdmaflux threads left after closing: " + left);
        System.out.printf("%-15s %8s %5s %16s %16s %10s%n", "mode", "size", "K", "mean msg/s", "mean MiB/s", "vs K=" + ks[0]);
        for (String mode : MODES) {
            for (int size : SIZES) {
                double base = mean(rates.get(key(mode, size, ks[0])));
                for (int k : ks) {
                    List<Double> v = rates.get(key(mode, size, k));
                    double m = mean(v);
                    System.out.printf("%-15s %8d %5d %16.0f %16.1f %9.2fx  rounds %s%n", mode, size, k, m, m * size / (1 << 20), m / base,
                        v.stream().map(x -> String.format("%.0f", x)).toList());
                }
            }
        }
    }

    private static String key(String mode, int size, int k) {
        return mode + "/" + size + "/" + k;
    }

    private static double mean(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    }

    private static String uptime() {
        try {
            Process p = new ProcessBuilder("uptime").redirectErrorStream(true).start();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
                String line = r.readLine();
                p.waitFor();
                return line == null ? "?" : line.trim();
            }
        } catch (Exception e) {
            return "? (" + e + ")";
        }
    }

    /** Two nodes, {@code n} connections from a to b, every accepted connection's receive counted. */
    private static final class Pair implements AutoCloseable {
        // nullable until built: close() releases whatever a failed constructor had opened
        private SoftProvider pa;
        private SoftProvider pb;
        private RdmaNode a;
        private RdmaNode b;
        private final List<RdmaConnection> clients = new ArrayList<>();
        private final List<RdmaConnection> accepted = new ArrayList<>();
        private final AtomicLong received = new AtomicLong();

        Pair(String mode, int n) throws InterruptedException {
            try {
                open(mode, n);
            } catch (RuntimeException | InterruptedException e) {
                close();
                throw e;
            }
        }

        private void open(String mode, int n) throws InterruptedException {
            SoftFabric fabric = SoftFabric.mem("active-" + mode.replaceAll("\\W", "-") + "-" + System.nanoTime());
            pa = SoftProvider.builder().name("active-a").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
            pb = SoftProvider.builder().name("active-b").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
            boolean shared = !mode.equals(MODES[0]);
            a = node(pa, "active-a", shared, n);
            b = node(pb, "active-b", shared, n);
            RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
            LinkedBlockingQueue<RdmaConnection> q = new LinkedBlockingQueue<>();
            server.accept().subscribe(c -> {
                c.receive().subscribe(m -> {
                    m.release();
                    received.incrementAndGet();
                });
                q.add(c);
            });
            for (int i = 0; i < n; i++) {
                clients.add(a.connect(server.address(), ConnectionSpec.defaults()).block(TIMEOUT));
                RdmaConnection c = q.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                if (c == null) {
                    throw new IllegalStateException("connection " + i + " was not accepted within " + TIMEOUT);
                }
                accepted.add(c);
            }
        }

        private static RdmaNode node(SoftProvider p, String name, boolean shared, int n) {
            RdmaNode.Builder nb = RdmaNode.builder().provider(p).name(name).threadingMode(ThreadingMode.DEDICATED)
                .discoverChannelProviders(false);
            if (shared) {
                nb.sharedReceiveQueue(ManyPeersProbe.srqBuffers(n)).sharedCompletionQueue(Math.max(1024, 2 * n));
            }
            return nb.build();
        }

        /** Messages/s received with the first {@code k} connections sending {@code size}-byte messages at once. */
        double measure(int k, int size, double seconds) {
            byte[] payload = new byte[size];
            int perConnection = size <= 4096 ? Math.max(1, 20_000 / k) : Math.max(1, 64 / k);
            long deadline = (long) (seconds * 1e9);
            long start = received.get();
            long t0 = System.nanoTime();
            long t;
            do {
                long target = received.get() + (long) perConnection * k;
                List<Mono<Void>> sends = new ArrayList<>(k);
                for (int i = 0; i < k; i++) {
                    sends.add(clients.get(i).send(Flux.range(0, perConnection).map(x -> RdmaMessage.of(payload))));
                }
                Mono.when(sends).block(TIMEOUT);
                long waitUntil = System.nanoTime() + TIMEOUT.toNanos();
                while (received.get() < target) {
                    if (System.nanoTime() - waitUntil > 0) {
                        throw new IllegalStateException("a batch was not received within " + TIMEOUT + " (K=" + k + ", " + size + " B)");
                    }
                    Thread.yield();
                }
                t = System.nanoTime() - t0;
            } while (t < deadline);
            return (received.get() - start) * 1e9 / t;
        }

        @Override
        public void close() {
            for (RdmaConnection c : clients) {
                c.close();
            }
            for (RdmaConnection c : accepted) {
                c.close();
            }
            for (AutoCloseable c : new AutoCloseable[] {a, b, pa, pb}) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (Exception e) {
                        throw new IllegalStateException("closing " + c, e);
                    }
                }
            }
        }
    }
}
