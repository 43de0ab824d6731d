package io.rdmaflux.core.tck;

import io.rdmaflux.core.ConnectionMetrics;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Two DEDICATED nodes (one progress thread each) over two soft providers in INVOKER mode that the nodes
 * drive, in real time: on the in-JVM fabric ({@link #mem}, which also takes
 * {@link PairOptions#railFaults() rail faults}, applied once connected, with RC retry timeouts of
 * {@value #FAULT_RETRY_TIMEOUT_NS} ns) or on the IP fabric over loopback, RC over TCP ({@link #net}).
 * Waits are bounded ({@link #TIMEOUT}) and wake on the signals the TCK's helpers report, never sleep a
 * fixed time. A second, probe connection between the same nodes serves
 * {@link #settle()}.
 */
public final class RealTimePair extends AbstractPair {
    /** How long any one wait may take: far beyond what a healthy run needs on a loaded 2-core host. */
    static final Duration TIMEOUT = Duration.ofSeconds(20);
    /**
     * RC retry timeout under rail faults: a lost last frame costs this much before its go-back-N retry;
     * 7 retries without progress (160 ms) still outlast a progress thread kept off the CPU for a while.
     */
    static final long FAULT_RETRY_TIMEOUT_NS = 20_000_000;
    private static final AtomicInteger IDS = new AtomicInteger();

    private final RdmaProvider pa;
    private final RdmaProvider pb;
    private final boolean portsCanFail;
    private final Runnable afterProvidersClosed;
    private final Object signals = new Object();
    private RdmaConnection probeClient;
    private RdmaConnection probeServer;

    private RealTimePair(PairOptions o, SoftProvider pa, SoftProvider pb, String fabric, String bindHost, boolean portsCanFail) {
        this(o, pa, pb, fabric, bindHost, portsCanFail, () -> { });
    }

    private RealTimePair(PairOptions o, RdmaProvider pa, RdmaProvider pb, String fabric, String bindHost, boolean portsCanFail,
                         Runnable afterProvidersClosed) {
        super(o.rails());
        this.pa = pa;
        this.pb = pb;
        this.portsCanFail = portsCanFail;
        this.afterProvidersClosed = afterProvidersClosed;
        try {
            if (portsCanFail && o.railLatencySkewNs() > 0) {
                SoftRails.apply((SoftProvider) pa, (SoftProvider) pb, o.rails(), o.railLatencySkewNs(), null);
            }
            int[] ports = ports(o.rails());
            RdmaNode.Builder cb = RdmaNode.builder().provider(pa).name("tck-client").ports(ports).threadingMode(ThreadingMode.DEDICATED);
            RdmaNode.Builder sb = RdmaNode.builder().provider(pb).name("tck-server").ports(ports).threadingMode(ThreadingMode.DEDICATED);
            if (o.wantsFastRailFailureDetection()) {
                // (3 + 1) x 100 ms: a port taken down is noticed within 0.4 s, while a progress thread kept off
                // the CPU for a while on a loaded host still does not fail a healthy rail
                cb.qpRetryTimeoutNs(100_000_000).qpRetryCount(3);
                sb.qpRetryTimeoutNs(100_000_000).qpRetryCount(3);
            }
            if (o.railFaults() != null) {
                cb.qpRetryTimeoutNs(FAULT_RETRY_TIMEOUT_NS);
                sb.qpRetryTimeoutNs(FAULT_RETRY_TIMEOUT_NS);
            }
            o.configureNode(cb);
            o.configureNode(sb);
            clientNode = cb.build();
            serverNode = sb.build();
            RdmaServer listener = serverNode.bind(new PortAddress(fabric, bindHost, 0));
            LinkedBlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
            listener.accept().subscribe(accepted::add);
            RdmaConnection[] main = connect(listener, accepted, o.connectionSpec());
            RdmaConnection[] probe = connect(listener, accepted, ConnectionSpec.defaults());
            listener.close();
            probeClient = probe[0];
            probeServer = probe[1];
            probeServer.receive().subscribe(RdmaMessage::release);
            connected(main[0], main[1]);
            if (o.railFaults() != null) {
                if (!portsCanFail) {
                    throw new UnsupportedOperationException("the IP fabric pair cannot inject RC wire faults");
                }
                SoftRails.apply((SoftProvider) pa, (SoftProvider) pb, o.rails(), o.railLatencySkewNs(), o.railFaults());
            }
        } catch (RuntimeException | Error e) {
            closeQuietly();
            throw e;
        }
    }

    private RdmaConnection[] connect(RdmaServer listener, LinkedBlockingQueue<RdmaConnection> accepted, ConnectionSpec spec) {
        RdmaConnection c = clientNode.connect(listener.address(), spec).block(TIMEOUT);
        RdmaConnection s;
        try {
            s = accepted.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while connecting", e);
        }
        if (c == null || s == null) {
            throw new AssertionError("connecting timed out after " + TIMEOUT);
        }
        return new RdmaConnection[] {c, s};
    }

    /** Over the in-JVM fabric: port failure and rail latency are supported. */
    public static RealTimePair mem(PairOptions o) {
        int id = IDS.incrementAndGet();
        SoftFabric fabric = SoftFabric.mem("tck-rt-" + id);
        SoftProvider pa = SoftProvider.builder().name("tck-rt-a" + id).fabric(fabric).threadingMode(ThreadingMode.INVOKER)
            .portsPerDevice(o.rails()).build();
        SoftProvider pb;
        try {
            pb = SoftProvider.builder().name("tck-rt-b" + id).fabric(fabric).threadingMode(ThreadingMode.INVOKER)
                .portsPerDevice(o.rails()).build();
        } catch (RuntimeException e) {
            pa.close();
            throw e;
        }
        return new RealTimePair(o, pa, pb, "mem", pb.devices().get(0).name(), true);
    }

    /** Over the IP fabric on 127.0.0.1, one loopback address per rail; no port failure, no rail model. */
    public static RealTimePair net(PairOptions o) {
        int id = IDS.incrementAndGet();
        NetTransportConfig.Builder cfg = NetTransportConfig.builder();
        for (int r = 0; r < o.rails(); r++) {
            cfg.address("127.0.0.1");
        }
        NetTransportConfig config = cfg.build();
        SoftProvider pa = NetProviders.builder(config).name("tck-net-a" + id).threadingMode(ThreadingMode.INVOKER).build();
        SoftProvider pb;
        try {
            pb = NetProviders.builder(config).name("tck-net-b" + id).threadingMode(ThreadingMode.INVOKER).build();
        } catch (RuntimeException e) {
            pa.close();
            throw e;
        }
        return new RealTimePair(o, pa, pb, "net", "127.0.0.1", false);
    }

    /**
     * Over two INVOKER soft-NIC providers on any frame transport (the {@code ucx} provider's NICs, for
     * one), each with {@link PairOptions#rails()} ports, the server listening at
     * {@code fabric://bindHost:0}; port failure and rail faults act on the NICs, so they work on any
     * transport. {@code afterProvidersClosed} runs once both are closed (e.g. to release what owns them).
     */
    public static RealTimePair over(PairOptions o, SoftProvider pa, SoftProvider pb, String fabric, String bindHost,
                                    Runnable afterProvidersClosed) {
        try {
            return new RealTimePair(o, pa, pb, fabric, bindHost, true, afterProvidersClosed);
        } catch (RuntimeException | Error e) {
            afterProvidersClosed.run();
            throw e;
        }
    }

    /**
     * Over two providers opened by name ({@link RdmaProviders#open(String, Map)}, e.g. from
     * {@code -Drdmaflux.provider}), the server listening on its first device's fabric and host; no port
     * failure, no rail faults. The caller skips what needs more rails than the provider has ports.
     */
    public static RealTimePair named(PairOptions o, String name, Map<String, String> options) {
        RdmaProvider pa = RdmaProviders.open(name, options);
        RdmaProvider pb;
        try {
            pb = RdmaProviders.open(name, options);
        } catch (RuntimeException e) {
            pa.close();
            throw e;
        }
        PortAddress at = pb.devices().get(0).port(1).address();
        return new RealTimePair(o, pa, pb, at.fabric(), at.host(), false, () -> { });
    }

    @Override
    public boolean virtualTime() {
        return false;
    }

    @Override
    public void await(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        synchronized (signals) {
            while (!done.getAsBoolean()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("not reached within " + TIMEOUT.toSeconds() + " s: " + what + "\n" + describe());
                }
                try {
                    // woken by signal(); the 2 ms cap covers conditions on counters that nothing signals
                    signals.wait(Math.max(1, Math.min(2, TimeUnit.NANOSECONDS.toMillis(left))));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted while waiting for: " + what, e);
                }
            }
        }
    }

    @Override
    public void signal() {
        synchronized (signals) {
            signals.notifyAll();
        }
    }

    @Override
    public void settle() {
        List<Long> before = counters();
        for (int round = 0; round < 100; round++) {
            for (int i = 0; i < 2; i++) {
                try {
                    probeClient.send(Mono.just(RdmaMessage.of(new byte[] {1}))).block(TIMEOUT);
                } catch (RuntimeException e) {
                    throw new AssertionError("settle() needs the probe connection, on rail 0 (port 1), which failed: " + e, e);
                }
            }
            List<Long> after = counters();
            if (after.equals(before)) {
                return;
            }
            before = after;
        }
        throw new AssertionError("the connection never stopped moving across 100 probe rounds\n" + describe());
    }

    private List<Long> counters() {
        ConnectionMetrics c = client().metrics();
        ConnectionMetrics s = server().metrics();
        return List.of(c.messagesSent(), c.messagesDelivered(), c.messagesReceived(), s.messagesSent(), s.messagesDelivered(),
            s.messagesReceived(), frames(c), frames(s));
    }

    private static long frames(ConnectionMetrics m) {
        long n = 0;
        for (long v : m.framesSent().values()) {
            n += v;
        }
        for (long v : m.framesReceived().values()) {
            n += v;
        }
        return n;
    }

    @Override
    public boolean supportsRailFailure() {
        return portsCanFail;
    }

    @Override
    public void failRail(Side side, int rail) {
        if (!portsCanFail) {
            throw new UnsupportedOperationException("ports of the IP fabric pair cannot be taken down");
        }
        SoftRails.port((SoftProvider) (side == Side.CLIENT ? pa : pb), rail).setState(PortState.DOWN);
    }

    @Override
    public void restoreRail(Side side, int rail) {
        if (!portsCanFail) {
            throw new UnsupportedOperationException("ports of the IP fabric pair cannot be taken down or up");
        }
        SoftRails.port((SoftProvider) (side == Side.CLIENT ? pa : pb), rail).setState(PortState.ACTIVE);
    }

    @Override
    public RailFaultCounters railFaultCounters() {
        if (!portsCanFail) {
            throw new UnsupportedOperationException("the IP fabric pair injects no RC wire faults");
        }
        return SoftRails.counters((SoftProvider) pa, (SoftProvider) pb);
    }

    @Override
    public void close() {
        if (probeClient != null) {
            probeClient.close();
            probeServer.close();
            Mono.when(probeClient.onClose(), probeServer.onClose()).onErrorResume(e -> Mono.empty()).block(TIMEOUT);
        }
        super.close();
    }

    @Override
    protected void closeProviders() {
        try {
            pa.close();
        } finally {
            try {
                pb.close();
            } finally {
                afterProvidersClosed.run();
            }
        }
    }
}
