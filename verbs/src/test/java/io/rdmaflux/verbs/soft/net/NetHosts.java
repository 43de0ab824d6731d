package io.rdmaflux.verbs.soft.net;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.agrona.concurrent.SystemNanoClock;

/**
 * Hosts on the IP fabric over loopback for tests: INVOKER providers, each on its own
 * {@link NetTransport}, driven together by {@link #runUntil}, which gives up after a wall-clock
 * bound (the network is real, so time is too; no sleeps, the loop spins).
 */
final class NetHosts implements AutoCloseable {
    static final long DEFAULT_BOUND_NS = 10_000_000_000L;

    final SystemNanoClock clock = new SystemNanoClock();
    private final List<SoftProvider> providers = new ArrayList<>();
    private final List<NetTransport> transports = new ArrayList<>();

    /** A new host with one loopback port. */
    SoftProvider host(String name) {
        return host(name, NetTransportConfig.loopback());
    }

    SoftProvider host(String name, NetTransportConfig config) {
        NetTransport t = new NetTransport(config);
        SoftProvider p = SoftProvider.builder().name(name).fabric(SoftFabric.over(name, t)).clock(clock)
            .portsPerDevice(config.addresses().size()).threadingMode(ThreadingMode.INVOKER)
            .connectionManager(NetConnectionManager::new).build();
        providers.add(p);
        transports.add(t);
        return p;
    }

    NetTransport transportOf(SoftProvider p) {
        return transports.get(providers.indexOf(p));
    }

    /** One pass of every open host. */
    int progress() {
        long now = clock.nanoTime();
        int work = 0;
        for (SoftProvider p : providers) {
            work += p.progress(now);
        }
        return work;
    }

    /** Progresses every host until {@code done}, failing after {@code boundNs} of real time. */
    void runUntil(BooleanSupplier done, long boundNs) {
        long end = clock.nanoTime() + boundNs;
        while (!done.getAsBoolean()) {
            assertTrue(clock.nanoTime() - end < 0, "condition not reached within " + boundNs / 1_000_000 + " ms");
            if (progress() == 0) {
                Thread.onSpinWait();
            }
        }
    }

    void runUntil(BooleanSupplier done) {
        runUntil(done, DEFAULT_BOUND_NS);
    }

    /** Progresses every host for {@code ns} of real time. */
    void runFor(long ns) {
        long end = clock.nanoTime() + ns;
        while (clock.nanoTime() - end < 0) {
            progress();
        }
    }

    /** Closes one host now (a peer that dies); later passes skip it. */
    void kill(SoftProvider p) {
        int i = providers.indexOf(p);
        providers.remove(i);
        transports.remove(i);
        p.close();
    }

    @Override
    public void close() {
        for (SoftProvider p : providers) {
            p.close();
        }
        providers.clear();
        transports.clear();
    }
}
