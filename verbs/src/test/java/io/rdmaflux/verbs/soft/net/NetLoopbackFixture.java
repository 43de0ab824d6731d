package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftPort;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.tck.RealTimeProviderPair;
import org.agrona.concurrent.SystemNanoClock;

/**
 * The TCK fixture of the soft provider on the IP fabric over loopback: two INVOKER providers, each
 * with its own {@link NetTransport} (two hosts that share nothing but the kernel's loopback), on the
 * real clock. {@link #progress()} runs one pass of both; {@link #advanceNs} spins until that much
 * real time passed, so frames in flight in the kernel get their chance to arrive.
 */
final class NetLoopbackFixture extends RealTimeProviderPair<SoftProvider> {
    final NetTransport transportA;
    final NetTransport transportB;

    NetLoopbackFixture() {
        this(new NetTransport(NetTransportConfig.loopback()), new NetTransport(NetTransportConfig.loopback()));
    }

    private NetLoopbackFixture(NetTransport ta, NetTransport tb) {
        super(side -> provider("net-" + side, side.equals("a") ? ta : tb));
        this.transportA = ta;
        this.transportB = tb;
    }

    private static SoftProvider provider(String name, NetTransport t) {
        return SoftProvider.builder().name(name).fabric(io.rdmaflux.verbs.soft.SoftFabric.over(name, t)).clock(new SystemNanoClock())
            .threadingMode(ThreadingMode.INVOKER).connectionManager(NetConnectionManager::new).build();
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
}
