package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.tck.TckFixture;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;

/** The TCK fixture of the soft provider on the mem fabric: two INVOKER providers on one virtual clock. */
final class SoftMemFixture implements TckFixture {
    private final VerbsLeakCheck leaks = VerbsLeakCheck.begin();
    private final SoftTwoNodes nodes;

    SoftMemFixture(int portsPerDevice, RailConfig rail) {
        this(portsPerDevice, rail, java.util.function.UnaryOperator.identity());
    }

    SoftMemFixture(int portsPerDevice, RailConfig rail, java.util.function.UnaryOperator<SoftProvider.Builder> customizer) {
        nodes = SoftTwoNodes.create(portsPerDevice, rail, customizer);
    }

    SoftTwoNodes nodes() {
        return nodes;
    }

    @Override
    public Device deviceA() {
        return nodes.a().devices().get(0);
    }

    @Override
    public Device deviceB() {
        return nodes.b().devices().get(0);
    }

    @Override
    public int progress() {
        return nodes.progress();
    }

    @Override
    public void advanceNs(long ns) {
        nodes.clock().advance(ns);
    }

    @Override
    public long nowNs() {
        return nodes.clock().nanoTime();
    }

    @Override
    public boolean virtualTime() {
        return true;
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
        nodes.close();
    }
}
