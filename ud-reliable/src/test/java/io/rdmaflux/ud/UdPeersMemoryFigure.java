package io.rdmaflux.ud;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Figure, not a test (no assertion on the numbers; runs only with {@code -Dud.figures=true}): memory per added
 * peer and connect-to-all time, {@link ChannelKind#RELIABLE_UD} vs {@link ChannelKind#RC_SEND_RECV}, as
 * {@code benchmarks}' {@code ManyPeersProbe} measures them for RC (which cannot select UD: benchmarks does not
 * depend on this module). Two DEDICATED nodes on a fresh in-JVM (mem) fabric with INVOKER soft providers; one
 * connection first (so a UD node's {@link UdPort} &mdash; shared receive pool, send slots &mdash; is fixed cost), then N
 * eager {@code connect(..).block()} in a row. Per connection (both sides): registered bytes of both soft providers
 * and live heap after full GCs; the least-squares slope over the N given. Order: RC and UD interleaved per N,
 * {@code rounds} times; the printed slope is over the median per N. Node modes ({@code -Dud.modes}): {@code defaults};
 * {@code small windows} ({@code sendBuffers(8).receiveBuffers(16)}); {@code SRQ+CQ small} (those plus
 * {@code sharedReceiveQueue(max(1024, 9 (N + 1) + 64))} and {@code sharedCompletionQueue(4096)}, whose pool the first
 * connection creates, so it counts as fixed cost here: its size grows by 9 buffers of 8 KiB per connection and node).
 *
 * <p>Run: {@code mvn -o -q -pl ud-reliable -am test -Dtest=UdPeersMemoryFigure -Dud.figures=true
 * -Dud.peers=16,64,256 -Dsurefire.failIfNoSpecifiedTests=false} (output in
 * {@code ud-reliable/target/surefire-reports/io.rdmaflux.ud.UdPeersMemoryFigure-output.txt}).
 */
@EnabledIfSystemProperty(named = "ud.figures", matches = "true")
class UdPeersMemoryFigure {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** The node's buffer settings: its defaults; small per-connection windows; those with a shared receive queue and CQ. */
    private static final String[] MODES = {"defaults", "small windows", "SRQ+CQ small"};

    private record Row(String mode, ChannelKind kind, int n, double connectsPerSec, double registeredPerConn, double heapPerConn,
                       long registered, long heap) {
    }

    @Test
    void memoryPerPeer() throws Exception {
        int[] ns = java.util.Arrays.stream(System.getProperty("ud.peers", "16,64,256").split(",")).mapToInt(Integer::parseInt).toArray();
        int rounds = Integer.getInteger("ud.rounds", 3);
        ChannelKind[] kinds = {ChannelKind.RC_SEND_RECV, ChannelKind.RELIABLE_UD};
        String[] modes = System.getProperty("ud.modes", String.join(",", MODES)).split(",");
        for (ChannelKind k : kinds) {
            run(MODES[0], k, 8); // warm-up
        }
        List<Row> rows = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            for (int n : ns) {
                for (String mode : modes) {
                for (ChannelKind k : kinds) {
                    Row r = run(mode, k, n);
                    rows.add(r);
                    System.out.printf("round %d %-13s %-13s N=%5d connects/s %8.0f registered/conn %10.0f B heap/conn %10.0f B%n", round, mode, k, n,
                        r.connectsPerSec, r.registeredPerConn, r.heapPerConn);
                }
                }
            }
        }
        for (String mode : modes) {
        for (ChannelKind k : kinds) {
            double[] x = new double[ns.length];
            double[] reg = new double[ns.length];
            double[] heap = new double[ns.length];
            StringBuilder rate = new StringBuilder();
            for (int i = 0; i < ns.length; i++) {
                int n = ns[i];
                List<Row> m = rows.stream().filter(r -> r.mode.equals(mode) && r.kind == k && r.n == n).toList();
                x[i] = n;
                reg[i] = median(m.stream().mapToDouble(r -> r.registered).toArray());
                heap[i] = median(m.stream().mapToDouble(r -> r.heap).toArray());
                rate.append(String.format(" N=%d %.0f/s", n, median(m.stream().mapToDouble(Row::connectsPerSec).toArray())));
            }
            System.out.printf("%s %s: per added peer (both sides, slope of medians over N=%s): registered %.0f B, heap %.0f B; connect-to-all%s%n",
                mode, k, java.util.Arrays.toString(ns), slope(x, reg), slope(x, heap), rate);
        }
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        java.util.Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static double slope(double[] x, double[] y) {
        double sx = 0;
        double sy = 0;
        double sxx = 0;
        double sxy = 0;
        for (int i = 0; i < x.length; i++) {
            sx += x[i];
            sy += y[i];
            sxx += x[i] * x[i];
            sxy += x[i] * y[i];
        }
        int k = x.length;
        return k < 2 ? Double.NaN : (k * sxy - sx * sy) / (k * sxx - sx * sx);
    }

    private static long heapUsed() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    private static Row run(String mode, ChannelKind kind, int n) throws InterruptedException {
        SoftFabric fabric = SoftFabric.mem("ud-peers-" + kind + "-" + n + "-" + System.nanoTime());
        SoftProvider pa = SoftProvider.builder().name("peers-a").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        SoftProvider pb = SoftProvider.builder().name("peers-b").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        RdmaNode a = node(pa, "peers-a", kind, mode, n);
        RdmaNode b = node(pb, "peers-b", kind, mode, n);
        List<RdmaConnection> all = new ArrayList<>();
        try {
            RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
            LinkedBlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
            server.accept().subscribe(c -> {
                c.receive().subscribe(RdmaMessage::release);
                accepted.add(c);
            });
            ConnectionSpec spec = ConnectionSpec.defaults().channelKind(kind);
            all.add(a.connect(server.address(), spec).block(TIMEOUT));
            all.add(accepted.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
            long heap0 = heapUsed();
            long reg0 = pa.allocatedBytes() + pb.allocatedBytes();
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                all.add(a.connect(server.address(), spec).block(TIMEOUT));
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                RdmaConnection c = accepted.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                if (c == null) {
                    throw new IllegalStateException(kind + ": connection " + i + " of " + n + " was not accepted within " + TIMEOUT);
                }
                all.add(c);
            }
            long reg1 = pa.allocatedBytes() + pb.allocatedBytes();
            long heap1 = heapUsed();
            return new Row(mode, kind, n, n * 1e9 / (t1 - t0), (double) (reg1 - reg0) / n, (double) (heap1 - heap0) / n, reg1 - reg0, heap1 - heap0);
        } finally {
            for (RdmaConnection c : all) {
                if (c != null) {
                    c.close();
                }
            }
            a.close();
            b.close();
            pa.close();
            pb.close();
        }
    }

    private static RdmaNode node(SoftProvider p, String name, ChannelKind kind, String mode, int n) {
        RdmaNode.Builder nb = RdmaNode.builder().provider(p).name(name).threadingMode(ThreadingMode.DEDICATED).discoverChannelProviders(false);
        if (!mode.equals(MODES[0])) {
            nb.sendBuffers(8).receiveBuffers(16);
        }
        if (mode.equals(MODES[2])) {
            // as ManyPeersProbe: a credit cannot be taken back, so the pool exceeds connections x window (8)
            nb.sharedReceiveQueue(Math.max(1024, 9 * (n + 1) + 64)).sharedCompletionQueue(4096);
        }
        if (kind == ChannelKind.RELIABLE_UD) {
            nb.channelProvider(new UdChannelProvider(UdSpec.DEFAULTS));
        }
        return nb.build();
    }
}
