package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftPort;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.tck.TckFixture;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.agrona.concurrent.SystemNanoClock;

/**
 * The TCK fixture of the soft provider on the IP fabric over loopback: two INVOKER providers, each
 * with its own {@link NetTransport} (two hosts that share nothing but the kernel's loopback), on the
 * real clock. {@link #progress()} runs one pass of both; {@link #advanceNs} spins until that much
 * real time passed, so frames in flight in the kernel get their chance to arrive.
 */
final class NetLoopbackFixture implements TckFixture {
    private final VerbsLeakCheck leaks = VerbsLeakCheck.begin();
    private final SystemNanoClock clock = new SystemNanoClock();
    final NetTransport transportA = new NetTransport(NetTransportConfig.loopback());
    final NetTransport transportB = new NetTransport(NetTransportConfig.loopback());
    final SoftProvider a;
    final SoftProvider b;

    NetLoopbackFixture() {
        a = provider("net-a", transportA);
        SoftProvider pb;
        try {
            pb = provider("net-b", transportB);
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
        b = pb;
    }

    private SoftProvider provider(String name, NetTransport t) {
        return SoftProvider.builder().name(name).fabric(io.rdmaflux.verbs.soft.SoftFabric.over(name, t)).clock(clock)
            .threadingMode(ThreadingMode.INVOKER).connectionManager(NetConnectionManager::new).build();
    }

    @Override
    public Device deviceA() {
        return a.devices().get(0);
    }

    @Override
    public Device deviceB() {
        return b.devices().get(0);
    }

    @Override
    public int progress() {
        long now = clock.nanoTime();
        return a.progress(now) + b.progress(now);
    }

    @Override
    public void advanceNs(long ns) {
        long until = clock.nanoTime() + ns;
        while (clock.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }

    @Override
    public long nowNs() {
        return clock.nanoTime();
    }

    @Override
    public boolean virtualTime() {
        return false;
    }

    @Override
    public boolean canSetPortState() {
        return true;
    }

    @Override
    public void setPortState(Port port, PortState state) {
        ((SoftPort) port).setState(state);
    }

    @Override
    public boolean canSetRail() {
        return true;
    }

    @Override
    public void setRail(Port port, RailConfig rail) {
        ((SoftPort) port).setRail(rail);
    }

    @Override
    public void assertNoLeaks() {
        leaks.assertClean();
    }

    @Override
    public void close() {
        a.close();
        b.close();
    }
}
