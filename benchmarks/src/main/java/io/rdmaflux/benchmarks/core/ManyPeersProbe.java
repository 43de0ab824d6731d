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
import reactor.core.publisher.Mono;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Many peers on one node (issue 15): for N connections between two DEDICATED nodes of the in-JVM fabric
 * (INVOKER soft providers driven by the nodes), per receive-buffer mode &mdash; per-connection pools (the
 * default) or one shared receive queue and send region per rail ({@code sharedReceiveQueue(1024)}), the
 * latter also with small per-connection windows ({@code sendBuffers(8).receiveBuffers(16)}) and one CQ per
 * device ({@code sharedCompletionQueue(4096)}), all over RC
 * send/receive rails:
 * <ul>
 *   <li>eager connect-to-all: N {@code connect(..).block()} in a row, connects/s, and the CPU per connect
 *       of the connecting thread and of the two nodes' progress threads (less sensitive to a loaded host
 *       than the wall time);</li>
 *   <li>memory per added peer: registered (off-heap) bytes of both soft providers and live heap after a
 *       full GC, both sides of each connection, the least-squares slope over the N given;</li>
 *   <li>lazy connect-to-all ({@code ConnectionSpec.lazy(true)}) for the same N, and the time for a first
 *       message to all of them (which establishes each connection).</li>
 * </ul>
 * Every N and mode runs on fresh nodes, in turn, in one JVM.
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -Xmx6g -XX:MaxDirectMemorySize=6g -cp benchmarks/target/benchmarks.jar
 * io.rdmaflux.benchmarks.core.ManyPeersProbe 64 256 1024}
 */
public final class ManyPeersProbe {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static final String[] MODES = {"per-connection pools", "shared receive queue", "SRQ+CQ, small windows"};

    private ManyPeersProbe() {
    }

    private record Row(String mode, int n, double connectsPerSec, double cpuMsPerConnect, double progressCpuMsPerConnect,
                       double registeredBytes, double heapBytes,
                       double lazyConnectsPerSec, double lazyFirstSendPerSec) {
    }

    public static void main(String[] args) throws Exception {
        int[] ns = args.length == 0 ? new int[] {64, 256, 1024} : java.util.Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
        // warm up the code paths once, untimed
        run("warm-up", 0, false, 32);
        run("warm-up", srqBuffers(32), false, 32);
        List<Row> rows = new ArrayList<>();
        for (int n : ns) {
            rows.add(run(MODES[0], 0, false, n));
            rows.add(run(MODES[1], srqBuffers(n), false, n));
            rows.add(run(MODES[2], srqBuffers(n), true, n));
        }
        System.out.printf("%-22s %6s %12s %12s %14s %16s %12s %14s %16s%n", "mode", "N", "connects/s", "cpu ms/conn",
            "progress ms/c", "registered B", "heap B", "lazy conn/s", "lazy 1st send/s");
        for (Row r : rows) {
            System.out.printf("%-22s %6d %12.0f %12.3f %14.3f %16.0f %12.0f %14.0f %16.0f%n", r.mode, r.n, r.connectsPerSec, r.cpuMsPerConnect,
                r.progressCpuMsPerConnect, r.registeredBytes, r.heapBytes, r.lazyConnectsPerSec, r.lazyFirstSendPerSec);
        }
        for (String mode : MODES) {
            List<Row> m = rows.stream().filter(r -> r.mode.equals(mode)).toList();
            System.out.printf("%s: per added peer (both sides, slope over N=%s): registered %.0f B, heap %.0f B%n", mode,
                m.stream().map(r -> String.valueOf(r.n)).toList(), slope(m, true), slope(m, false));
        }
        for (int n : ns) {
            System.out.printf("SRQ pools for N=%d: %d buffers x 8 KiB per node = %d B registered per node, %.0f B per connection%n", n,
                srqBuffers(n), srqBuffers(n) * 8192L, srqBuffers(n) * 8192.0 / (2 * n + 1));
        }
    }

    /**
     * SRQ buffers per rail for a run of {@code n} peers (2n + 1 connections: eager, lazy, first): a credit
     * cannot be taken back, so every connection whose subscriber has demand holds up to the credit window
     * (8) unused; the pool must exceed connections x window or the last ones starve (see
     * {@code RdmaNode.Builder.sharedCreditWindow}). This pool is the per-peer registered cost of the SRQ
     * modes, printed separately.
     */
    static int srqBuffers(int n) {
        return Math.max(1024, 9 * (2 * n + 1) + 64);
    }

    /** Least-squares slope of total bytes over N. */
    private static double slope(List<Row> rows, boolean registered) {
        double sx = 0;
        double sy = 0;
        double sxx = 0;
        double sxy = 0;
        for (Row r : rows) {
            double y = (registered ? r.registeredBytes : r.heapBytes) * r.n;
            sx += r.n;
            sy += y;
            sxx += (double) r.n * r.n;
            sxy += r.n * y;
        }
        int k = rows.size();
        return k < 2 ? Double.NaN : (k * sxy - sx * sy) / (k * sxx - sx * sx);
    }

    /** CPU time of the nodes' progress threads so far, ns (both nodes of a run are the only ones alive). */
    private static long progressThreadsCpuNs() {
        var threads = ManagementFactory.getThreadMXBean();
        long total = 0;
        for (var info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith("rdmaflux-progress")) {
                long ns = threads.getThreadCpuTime(info.getThreadId());
                total += Math.max(0, ns);
            }
        }
        return total;
    }

    private static long heapUsed() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    private static Row run(String mode, int srqBuffers, boolean smallWindows, int n) throws InterruptedException {
        SoftFabric fabric = SoftFabric.mem("many-peers-" + mode.replace(' ', '-') + "-" + n + "-" + System.nanoTime());
        SoftProvider pa = SoftProvider.builder().name("peers-a").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        SoftProvider pb = SoftProvider.builder().name("peers-b").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        RdmaNode a = node(pa, "peers-a", srqBuffers, smallWindows);
        RdmaNode b = node(pb, "peers-b", srqBuffers, smallWindows);
        try {
            RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
            LinkedBlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
            server.accept().subscribe(c -> {
                c.receive().subscribe(RdmaMessage::release);
                accepted.add(c);
            });
            // one connection first, so the shared pools (created on first use) count as fixed cost
            a.connect(server.address(), ConnectionSpec.defaults()).block(TIMEOUT);
            accepted.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            long heap0 = heapUsed();
            long reg0 = pa.allocatedBytes() + pb.allocatedBytes();
            var threads = ManagementFactory.getThreadMXBean();
            long progress0 = progressThreadsCpuNs();
            long cpu0 = threads.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                a.connect(server.address(), ConnectionSpec.defaults()).block(TIMEOUT);
            }
            long t1 = System.nanoTime();
            long cpu1 = threads.getCurrentThreadCpuTime();
            long progress1 = progressThreadsCpuNs();
            for (int i = 0; i < n; i++) {
                if (accepted.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) == null) {
                    throw new IllegalStateException("connection " + i + " was not accepted within " + TIMEOUT);
                }
            }
            long reg1 = pa.allocatedBytes() + pb.allocatedBytes();
            long heap1 = heapUsed();

            // lazy: connect-to-all, then a first message to each (which establishes it)
            List<RdmaConnection> lazy = new ArrayList<>(n);
            long l0 = System.nanoTime();
            ConnectionSpec lazySpec = ConnectionSpec.defaults().lazy(true);
            for (int i = 0; i < n; i++) {
                lazy.add(a.connect(server.address(), lazySpec).block(TIMEOUT));
            }
            long l1 = System.nanoTime();
            List<Mono<Void>> sends = new ArrayList<>(n);
            for (RdmaConnection c : lazy) {
                sends.add(c.send(Mono.fromSupplier(() -> RdmaMessage.of("hello"))));
            }
            Mono.when(sends).block(Duration.ofMinutes(2));
            long l2 = System.nanoTime();
            double s = 1e9;
            return new Row(mode, n, n * s / (t1 - t0), (cpu1 - cpu0) / 1e6 / n, (progress1 - progress0) / 1e6 / n,
                (double) (reg1 - reg0) / n, (double) (heap1 - heap0) / n,
                n * s / (l1 - l0), n * s / (l2 - l1));
        } finally {
            a.close();
            b.close();
            pa.close();
            pb.close();
        }
    }

    private static RdmaNode node(SoftProvider p, String name, int srqBuffers, boolean smallWindows) {
        // RC send/receive rails in every mode: the eager channel (on the class path here) keeps RDMA rings per
        // peer by design and does not draw from the SRQ
        RdmaNode.Builder nb = RdmaNode.builder().provider(p).name(name).threadingMode(ThreadingMode.DEDICATED)
            .discoverChannelProviders(false);
        if (smallWindows) {
            // per-connection state is sized by these: the in-flight ledger by sendBuffers x 64 packed messages;
            // and one CQ per device for every QP (2 N + the warm-up and first connections, with room)
            nb.sendBuffers(8).receiveBuffers(16).sharedCompletionQueue(4096);
        }
        if (srqBuffers > 0) {
            nb.sharedReceiveQueue(srqBuffers);
        }
        return nb.build();
    }
}
