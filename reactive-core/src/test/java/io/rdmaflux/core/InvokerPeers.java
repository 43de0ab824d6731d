package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.SoftTwoNodes;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Two INVOKER-mode nodes on a private in-JVM soft fabric sharing one virtual clock, with any number of
 * connections from the client node to the server node: deterministic, no threads, no sleeps.
 */
final class InvokerPeers implements AutoCloseable {
    final SoftTwoNodes soft;
    final RdmaNode clientNode;
    final RdmaNode serverNode;
    final RdmaServer listener;
    private final List<RdmaConnection> accepted = new ArrayList<>();

    InvokerPeers(Consumer<RdmaNode.Builder> config) {
        this(config, UnaryOperator.identity());
    }

    InvokerPeers(Consumer<RdmaNode.Builder> config, UnaryOperator<SoftProvider.Builder> providers) {
        soft = SoftTwoNodes.create(1, RailConfig.UNSHAPED, providers);
        RdmaNode.Builder cb = RdmaNode.builder().provider(soft.a()).name("client").threadingMode(ThreadingMode.INVOKER)
            .clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000);
        RdmaNode.Builder sb = RdmaNode.builder().provider(soft.b()).name("server").threadingMode(ThreadingMode.INVOKER)
            .clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000);
        config.accept(cb);
        config.accept(sb);
        RdmaNode built = null;
        try {
            built = cb.build();
            serverNode = sb.build();
        } catch (RuntimeException e) {
            if (built != null) {
                built.close();
            }
            soft.close();
            throw e;
        }
        clientNode = built;
        listener = serverNode.bind(new PortAddress("mem", soft.b().devices().get(0).name(), 0));
        listener.accept().subscribe(c -> {
            synchronized (accepted) {
                accepted.add(c);
            }
        });
    }

    /** Opens one connection: {client side, server side}. */
    RdmaConnection[] connect(ConnectionSpec spec) {
        int before;
        synchronized (accepted) {
            before = accepted.size();
        }
        AtomicReference<RdmaConnection> c = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        clientNode.connect(listener.address(), spec).subscribe(c::set, error::set);
        runUntil(() -> error.get() != null || (c.get() != null && acceptedCount() > before));
        if (error.get() != null) {
            throw new AssertionError("connect failed", error.get());
        }
        synchronized (accepted) {
            return new RdmaConnection[] {c.get(), accepted.get(before)};
        }
    }

    int acceptedCount() {
        synchronized (accepted) {
            return accepted.size();
        }
    }

    int pass() {
        return soft.progress() + clientNode.invoke() + serverNode.invoke();
    }

    void drive() {
        int idle = 0;
        for (int i = 0; i < 1_000_000 && idle < 3; i++) {
            if (pass() == 0) {
                idle++;
                soft.clock().advance(1_000);
            } else {
                idle = 0;
            }
        }
    }

    void runUntil(BooleanSupplier done) {
        for (int i = 0; i < 2_000_000; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (pass() == 0) {
                soft.clock().advance(1_000);
            }
        }
        throw new AssertionError("condition not reached (virtual time " + soft.clock().nanoTime() + " ns)");
    }

    @Override
    public void close() {
        try {
            for (RdmaConnection c : clientNode.connections()) {
                c.close();
            }
            for (RdmaConnection c : serverNode.connections()) {
                c.close();
            }
            drive();
        } finally {
            clientNode.close();
            serverNode.close();
            soft.close();
        }
    }
}
