package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.testing.SoftTwoNodes;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * Two INVOKER-mode nodes on a private in-JVM soft fabric sharing one virtual clock: no threads, no
 * sleeps, the same run every time. Each progress pass runs both providers, then both nodes; a pass that
 * does nothing advances the clock 1 µs. RC retry timeouts are 1 ms of virtual time, {@value #FAULT_RETRY_TIMEOUT_NS} ns
 * under {@link PairOptions#railFaults() rail faults} (which it applies once connected, so they hit the
 * whole connection but its setup), so that recovering from a lost tail frame costs 200 idle passes, not
 * 1,000.
 */
public final class VirtualTimeMemPair extends AbstractPair {
    /** The most passes one {@link #await} or {@link #settle} may take. */
    static final int MAX_PASSES = 2_000_000;
    /** RC retry timeout under rail faults: 10 x the slowest round trip (2 x 5 µs skew) plus a reordered frame's 10 µs. */
    static final long FAULT_RETRY_TIMEOUT_NS = 200_000;

    private final SoftTwoNodes soft;
    /** Rail {@code r} is port 1 of device {@code r} (a node over several devices), not port {@code r + 1} of one device. */
    private final boolean overDevices;

    public VirtualTimeMemPair(PairOptions o) {
        this(o, SoftTwoNodes.create(o.rails(), RailConfig.UNSHAPED), false);
    }

    /**
     * A pair whose nodes' rails are on several devices: rail {@code r} is port 1 of device {@code r}, with at
     * least two devices per host (a one-rail connection then uses the first device's), and each device's
     * memory registrations and keys of its own.
     */
    public static VirtualTimeMemPair overDevices(PairOptions o) {
        int devices = Math.max(2, o.rails());
        return new VirtualTimeMemPair(o, SoftTwoNodes.create(1, RailConfig.UNSHAPED, b -> b.devices(devices)), true);
    }

    private VirtualTimeMemPair(PairOptions o, SoftTwoNodes soft, boolean overDevices) {
        super(o.rails());
        this.soft = soft;
        this.overDevices = overDevices;
        try {
            if (o.railLatencySkewNs() > 0) {
                SoftRails.apply(soft.a(), soft.b(), o.rails(), o.railLatencySkewNs(), null, overDevices);
            }
            long retryTimeoutNs = o.railFaults() != null ? FAULT_RETRY_TIMEOUT_NS : 1_000_000;
            RdmaNode.Builder cb = RdmaNode.builder().provider(soft.a()).name("tck-client")
                .threadingMode(ThreadingMode.INVOKER).clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(retryTimeoutNs);
            RdmaNode.Builder sb = RdmaNode.builder().provider(soft.b()).name("tck-server")
                .threadingMode(ThreadingMode.INVOKER).clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(retryTimeoutNs);
            if (overDevices) {
                cb.rails(railPerDevice(soft.a()));
                sb.rails(railPerDevice(soft.b()));
            } else {
                cb.ports(ports(o.rails()));
                sb.ports(ports(o.rails()));
            }
            o.configureNode(cb);
            o.configureNode(sb);
            clientNode = cb.build();
            serverNode = sb.build();
            RdmaServer listener = serverNode.bind(new PortAddress("mem", soft.b().devices().get(0).name(), 0));
            AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
            AtomicReference<RdmaConnection> connected = new AtomicReference<>();
            AtomicReference<Throwable> error = new AtomicReference<>();
            listener.accept().subscribe(accepted::set);
            clientNode.connect(listener.address(), o.connectionSpec()).subscribe(connected::set, error::set);
            await("connect", () -> (accepted.get() != null && connected.get() != null) || error.get() != null);
            listener.close();
            if (error.get() != null) {
                throw new AssertionError("connect failed: " + error.get(), error.get());
            }
            connected(connected.get(), accepted.get());
            if (o.railFaults() != null) {
                SoftRails.apply(soft.a(), soft.b(), o.rails(), o.railLatencySkewNs(), o.railFaults(), overDevices);
            }
            settle();
        } catch (RuntimeException | Error e) {
            closeQuietly();
            throw e;
        }
    }

    private static java.util.List<io.rdmaflux.core.RailSpec> railPerDevice(io.rdmaflux.verbs.soft.SoftProvider p) {
        return p.devices().stream().map(d -> io.rdmaflux.core.RailSpec.of(d.name(), 1)).toList();
    }

    /** One pass: both providers, then both nodes. */
    private int pass() {
        return soft.progress() + clientNode.invoke() + serverNode.invoke();
    }

    @Override
    public boolean virtualTime() {
        return true;
    }

    @Override
    public void await(String what, BooleanSupplier done) {
        for (int i = 0; i < MAX_PASSES; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (pass() == 0) {
                soft.clock().advance(1_000);
            }
        }
        if (!done.getAsBoolean()) {
            throw new AssertionError("not reached within " + MAX_PASSES + " passes (virtual time " + soft.clock().nanoTime() + " ns): "
                + what + "\n" + describe());
        }
    }

    @Override
    public void settle() {
        int idle = 0;
        for (int i = 0; i < MAX_PASSES && idle < 3; i++) {
            if (pass() == 0) {
                idle++;
                soft.clock().advance(1_000);
            } else {
                idle = 0;
            }
        }
        // timers (credit thresholds, RC retries) run on virtual time: let a few milliseconds pass idle too
        for (int i = 0; i < 50; i++) {
            if (pass() == 0) {
                soft.clock().advance(100_000);
            }
        }
    }

    @Override
    public void signal() {
        // the test thread drives every signal itself
    }

    @Override
    public boolean supportsRailFailure() {
        return true;
    }

    @Override
    public void failRail(Side side, int rail) {
        SoftRails.port(side == Side.CLIENT ? soft.a() : soft.b(), rail, overDevices).setState(PortState.DOWN);
    }

    @Override
    public void restoreRail(Side side, int rail) {
        SoftRails.port(side == Side.CLIENT ? soft.a() : soft.b(), rail, overDevices).setState(PortState.ACTIVE);
    }

    @Override
    public RailFaultCounters railFaultCounters() {
        return SoftRails.counters(soft.a(), soft.b());
    }

    @Override
    public SoftRails.UdFaultCounters udFaultCounters() {
        return SoftRails.udCounters(soft.a(), soft.b());
    }

    @Override
    protected void closeProviders() {
        soft.close();
    }
}
