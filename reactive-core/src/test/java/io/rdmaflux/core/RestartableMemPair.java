package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VirtualClock;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.jspecify.annotations.Nullable;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * A client host and a server host on one private in-JVM fabric, INVOKER mode on one virtual clock,
 * whose server can crash (its provider closes under its node: frames to it are dropped, nothing is
 * said to the peer), shut down (its node closes: the peer hears an abort) and start again on the
 * same device name and service, i.e. the same address. The client host stays up throughout.
 */
final class RestartableMemPair implements AutoCloseable {
    private static final AtomicInteger IDS = new AtomicInteger();

    final VirtualClock clock = new VirtualClock();
    final SoftFabric fabric;
    final String serverDevice;
    final PortAddress address;
    final SoftProvider clientProvider;
    final RdmaNode clientNode;
    @Nullable SoftProvider serverProvider;
    @Nullable RdmaNode serverNode;
    @Nullable RdmaServer server;
    /** A crashed server: its node is not run any more, and is freed at {@link #close()}. */
    private @Nullable RdmaNode crashedNode;
    private @Nullable SoftProvider crashedProvider;

    RestartableMemPair() {
        int id = IDS.incrementAndGet();
        fabric = SoftFabric.mem("restart-" + id);
        serverDevice = "srv" + id;
        address = new PortAddress("mem", serverDevice, 7000);
        clientProvider = SoftProvider.builder().name("restart-client" + id).fabric(fabric).clock(clock)
            .threadingMode(ThreadingMode.INVOKER).deviceNames(List.of("cli" + id)).build();
        clientNode = node(clientProvider, "client");
    }

    private RdmaNode node(SoftProvider p, String name) {
        return RdmaNode.builder().provider(p).name(name).threadingMode(ThreadingMode.INVOKER).clock(clock)
            .qpRetryTimeoutNs(1_000_000).receiveBuffers(8).build();
    }

    /** Starts (or restarts) the server host: a new provider with the same device name, a node listening at {@link #address}. */
    RdmaServer startServer() {
        if (serverNode != null) {
            throw new IllegalStateException("the server is up; crash() or shutdown() it first");
        }
        serverProvider = SoftProvider.builder().name(serverDevice + "-" + clock.nanoTime()).fabric(fabric).clock(clock)
            .threadingMode(ThreadingMode.INVOKER).deviceNames(List.of(serverDevice)).build();
        serverNode = node(serverProvider, "server");
        server = serverNode.bind(address);
        return server;
    }

    /** The server process dies: its NIC goes away at once, nothing is sent to the client. */
    void crash() {
        crashedNode = serverNode;
        crashedProvider = serverProvider;
        crashedProvider.close();
        serverNode = null;
        serverProvider = null;
        server = null;
    }

    /** The server shuts down in order: its node aborts its connections (the client hears it), then its provider closes. */
    void shutdown() {
        serverNode.close();
        drive();
        serverProvider.close();
        serverNode = null;
        serverProvider = null;
        server = null;
    }

    int pass() {
        int work = clientNode.invoke();
        RdmaNode s = serverNode;
        return s != null ? work + s.invoke() : work;
    }

    /** Runs until three consecutive passes do no work, advancing virtual time 1 µs per idle pass. */
    void drive() {
        int idle = 0;
        for (int i = 0; i < 1_000_000 && idle < 3; i++) {
            if (pass() == 0) {
                idle++;
                clock.advance(1_000);
            } else {
                idle = 0;
            }
        }
    }

    /** Runs for {@code ns} of virtual time. */
    void runFor(long ns) {
        long end = clock.nanoTime() + ns;
        while (clock.nanoTime() < end) {
            if (pass() == 0) {
                clock.advance(1_000);
            }
        }
    }

    void runUntil(BooleanSupplier done) {
        for (int i = 0; i < 2_000_000; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (pass() == 0) {
                clock.advance(1_000);
            }
        }
        throw new AssertionError("condition not reached (virtual time " + clock.nanoTime() + " ns)");
    }

    @Override
    public void close() {
        try {
            drive();
        } finally {
            if (serverNode != null) {
                serverNode.close();
                serverProvider.close();
            }
            if (crashedNode != null) {
                crashedNode.close();
            }
            clientNode.close();
            clientProvider.close();
        }
    }
}
