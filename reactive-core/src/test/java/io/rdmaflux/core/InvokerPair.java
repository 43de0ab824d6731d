package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.testing.SoftTwoNodes;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Two INVOKER-mode nodes on a private in-JVM soft fabric sharing one virtual clock, connected to
 * each other: deterministic, no threads, no sleeps. {@link #drive()} runs duty cycles (providers
 * and both nodes) until nothing moves, advancing virtual time 1 µs per idle pass.
 */
final class InvokerPair implements AutoCloseable {
    final SoftTwoNodes soft;
    final RdmaNode clientNode;
    final RdmaNode serverNode;
    final RdmaConnection client;
    final RdmaConnection server;
    private final PortAddress listenAddress;

    private InvokerPair(int ports, ConnectionSpec spec, Consumer<RdmaNode.Builder> config) {
        this(1, ports, spec, config);
    }

    /** {@code devices} devices of {@code ports} ports per host; the nodes' rails: every port of every device, device by device. */
    private InvokerPair(int devices, int ports, ConnectionSpec spec, Consumer<RdmaNode.Builder> config) {
        soft = SoftTwoNodes.create(ports, RailConfig.UNSHAPED, b -> b.devices(devices));
        int[] portNumbers = new int[ports];
        for (int i = 0; i < ports; i++) {
            portNumbers[i] = i + 1;
        }
        RdmaNode.Builder cb = RdmaNode.builder().provider(soft.a()).name("client")
            .threadingMode(ThreadingMode.INVOKER).clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000);
        RdmaNode.Builder sb = RdmaNode.builder().provider(soft.b()).name("server")
            .threadingMode(ThreadingMode.INVOKER).clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000);
        if (devices == 1) {
            cb.ports(portNumbers);
            sb.ports(portNumbers);
        } else {
            cb.rails(allPorts(soft.a(), ports));
            sb.rails(allPorts(soft.b(), ports));
        }
        config.accept(cb);
        config.accept(sb);
        clientNode = cb.build();
        serverNode = sb.build();
        RdmaServer listener = serverNode.bind(new PortAddress("mem", soft.b().devices().get(0).name(), 0));
        listenAddress = listener.address();
        AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
        AtomicReference<RdmaConnection> connected = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        listener.accept().subscribe(accepted::set);
        clientNode.connect(listener.address(), spec).subscribe(connected::set, error::set);
        runUntil(() -> (accepted.get() != null && connected.get() != null) || error.get() != null);
        if (error.get() != null) {
            throw new AssertionError("connect failed", error.get());
        }
        client = connected.get();
        server = accepted.get();
        drive();
    }

    static InvokerPair open() {
        return new InvokerPair(1, ConnectionSpec.defaults(), b -> { });
    }

    static InvokerPair open(Consumer<RdmaNode.Builder> config) {
        return new InvokerPair(1, ConnectionSpec.defaults(), config);
    }

    static InvokerPair open(int ports, ConnectionSpec spec, Consumer<RdmaNode.Builder> config) {
        return new InvokerPair(ports, spec, config);
    }

    /** A pair whose nodes' rails are the {@code ports} ports of each of {@code devices} devices per host (rail order: device by device). */
    static InvokerPair overDevices(int devices, int ports, ConnectionSpec spec, Consumer<RdmaNode.Builder> config) {
        return new InvokerPair(devices, ports, spec, config);
    }

    private static java.util.List<RailSpec> allPorts(io.rdmaflux.verbs.soft.SoftProvider p, int ports) {
        java.util.List<RailSpec> rails = new java.util.ArrayList<>();
        for (io.rdmaflux.verbs.Device d : p.devices()) {
            for (int port = 1; port <= ports; port++) {
                rails.add(RailSpec.of(d.name(), port));
            }
        }
        return rails;
    }

    /** Where the server node listens. */
    PortAddress listenAddress() {
        return listenAddress;
    }

    /** One pass: both providers, then both nodes. */
    int pass() {
        return soft.progress() + clientNode.invoke() + serverNode.invoke();
    }

    /** Runs until three consecutive passes do no work (advancing virtual time on idle passes). */
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
        for (int i = 0; i < 1_000_000; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (pass() == 0) {
                soft.clock().advance(1_000);
            }
        }
        throw new AssertionError("condition not reached (virtual time " + soft.clock().nanoTime() + " ns)");
    }

    /**
     * Closes both connections gracefully, then the nodes and providers. A received message the test
     * still holds is freed by its node's close and reported to the {@link RdmaLeakReporter}, which
     * {@code RdmaLeakCheckExtension} (registered for every test of this module) turns into the test's
     * failure, naming the message.
     */
    @Override
    public void close() {
        try {
            client.close();
            server.close();
            drive();
        } finally {
            clientNode.close();
            serverNode.close();
            soft.close();
        }
    }
}
