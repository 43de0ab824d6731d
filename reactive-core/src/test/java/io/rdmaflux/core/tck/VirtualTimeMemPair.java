package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftPort;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.SoftTwoNodes;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * Two INVOKER-mode nodes on a private in-JVM soft fabric sharing one virtual clock: no threads, no
 * sleeps, the same run every time. Each progress pass runs both providers, then both nodes; a pass that
 * does nothing advances the clock 1 µs. RC retry timeouts are 1 ms of virtual time.
 */
public final class VirtualTimeMemPair extends AbstractPair {
    /** The most passes one {@link #await} or {@link #settle} may take. */
    static final int MAX_PASSES = 2_000_000;

    private final SoftTwoNodes soft;

    public VirtualTimeMemPair(PairOptions o) {
        this(o, SoftTwoNodes.create(o.rails(), RailConfig.UNSHAPED));
    }

    private VirtualTimeMemPair(PairOptions o, SoftTwoNodes soft) {
        super(o.rails());
        this.soft = soft;
        try {
            skew(o.railLatencySkewNs());
            int[] ports = ports(o.rails());
            RdmaNode.Builder cb = RdmaNode.builder().provider(soft.a()).name("tck-client").ports(ports)
                .threadingMode(ThreadingMode.INVOKER).clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000);
            RdmaNode.Builder sb = RdmaNode.builder().provider(soft.b()).name("tck-server").ports(ports)
                .threadingMode(ThreadingMode.INVOKER).clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000);
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
            settle();
        } catch (RuntimeException | Error e) {
            closeQuietly();
            throw e;
        }
    }

    private void skew(long skewNs) {
        if (skewNs <= 0) {
            return;
        }
        for (int r = 1; r < rails(); r++) {
            RailConfig slow = RailConfig.builder().latencyNs(r * skewNs).build();
            port(soft.a(), r).setRail(slow);
            port(soft.b(), r).setRail(slow);
        }
    }

    private static SoftPort port(SoftProvider p, int rail) {
        return (SoftPort) p.devices().get(0).port(rail + 1);
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
        port(side == Side.CLIENT ? soft.a() : soft.b(), rail).setState(PortState.DOWN);
    }

    @Override
    protected void closeProviders() {
        soft.close();
    }
}
