package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftPort;
import io.rdmaflux.verbs.soft.SoftProvider;

/**
 * One soak process's end of the rails: a soft provider on the IP (net) fabric with one port per
 * address and one node over it ({@link NetRails#openProvider}, {@link NetRails#node}), kept for the
 * whole soak while connections come and go (one per epoch). It injects what the soft NIC can:
 * a rail flap (the port DOWN then ACTIVE: while down, the port drops every frame it would send or
 * receive, so RC requesters retry and, when the outage outlasts their retries, the connection fails
 * that rail over to the other) and RC frame loss on every port ({@code RailConfig.rcLossRate}; the
 * soft requester retransmits). Both happen in the soft NIC above the socket, so they work on plain
 * loopback; {@code scripts/soak.sh --netns} adds kernel-level loss (iptables) on the veth rails.
 *
 * <p>Resource probes for {@link ResourceSampler}: registered off-heap bytes (provider-allocated
 * regions plus the registration cache's bytes) and buffers the application holds.
 *
 * <p>Thread-safety: {@link #flap} and the probes from any thread; {@link #close()} once, by the owner.
 */
final class SoakEndpoint implements AutoCloseable {
    private final SoftProvider provider;
    private final RdmaNode node;
    private final int rails;
    private final RailProbe probe;

    /**
     * @param rcLoss probability in [0, 0.5] that a port drops an RC frame it sends
     * @throws UserError if {@code rcLoss} is out of range or an address cannot be bound
     */
    SoakEndpoint(NetRails.Settings s, String role, double rcLoss, long seed) {
        if (!(rcLoss >= 0 && rcLoss <= 0.5)) {
            throw new UserError("--rc-loss must be in [0, 0.5] but it was " + rcLoss);
        }
        RdmaProvider p = NetRails.openProvider(s.addresses(), null, s.bufferBytes(), role, "invoker");
        this.provider = (SoftProvider) p;
        this.rails = s.addresses().size();
        try {
            if (rcLoss > 0) {
                for (int r = 0; r < rails; r++) {
                    SoftPort port = provider.softDevice(0).softPort(r + 1);
                    port.setRail(RailConfig.builder().rcLossRate(rcLoss).rcFaultSeed(seed * 31 + r + role.hashCode()).build());
                }
            }
            this.probe = new RailProbe(s.policy());
            this.node = NetRails.node(p, s, role, probe);
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
    }

    RdmaNode node() {
        return node;
    }

    /** The striping policy (wrapped to count bytes per rail) both the accept side and {@code connect} use. */
    RailProbe probe() {
        return probe;
    }

    /** Payload bytes this end completed per rail so far. */
    long[] railBytes() {
        return probe.railBytes();
    }

    int rails() {
        return rails;
    }

    /** Takes rail {@code rail} (0-based) down, or back up. */
    void setRailUp(int rail, boolean up) {
        provider.softDevice(0).softPort(rail + 1).setState(up ? PortState.ACTIVE : PortState.DOWN);
    }

    /** Off-heap bytes registered now: the provider's allocated regions plus the registration cache's. */
    long registeredBytes() {
        return provider.allocatedBytes() + node.registrationCacheStats().registeredBytes();
    }

    /** Received messages the application has not released yet (the receive pools' occupancy by the app). */
    long buffersHeld() {
        return node.metrics().buffersOutstanding();
    }

    @Override
    public void close() {
        try {
            node.close();
        } finally {
            provider.close();
        }
    }
}
