package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.CmException;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.soft.SoftProvider;
import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import org.jspecify.annotations.Nullable;

/**
 * The client side of a {@link NetConnectionManager} exchange before and after its bytes: which local
 * address a connect request leaves from, and what an I/O failure of the exchange means to the caller
 * ({@link CmException.Reason}, so a retrying connect knows whether to try again). Stateless.
 */
final class CmExchangeSupport {
    private CmExchangeSupport() {
    }

    /**
     * The address a connect request leaves from: none (the kernel's choice) when the kernel would pick one
     * of this node's rail addresses anyway, which keeps the path the routing table gives (strict reverse
     * path filters drop a rail-1 source on rail 2); otherwise this node's first rail address of
     * {@code to}'s family and scope, so the listener sees the node and not another address of the host
     * (e.g. 127.0.0.1 for a node on 127.0.0.2). Null too when this is not a net transport.
     */
    static java.net.@Nullable InetAddress sourceFor(SoftProvider provider, InetSocketAddress to) {
        if (!(provider.fabric().transport() instanceof NetTransport t)) {
            return null;
        }
        java.net.InetAddress kernel = null;
        try (java.nio.channels.DatagramChannel probe = java.nio.channels.DatagramChannel.open()) {
            // a connected UDP socket learns its route's source address without sending anything
            probe.connect(to);
            kernel = ((InetSocketAddress) probe.getLocalAddress()).getAddress();
        } catch (IOException | RuntimeException e) {
            kernel = null;
        }
        if (kernel != null && t.config.addresses().contains(kernel)) {
            return null;
        }
        for (java.net.InetAddress a : t.config.addresses()) {
            if (a.getClass() == to.getAddress().getClass() && a.isLoopbackAddress() == to.getAddress().isLoopbackAddress()) {
                return a;
            }
        }
        return null;
    }

    /** The {@link CmException.Reason} of an I/O failure of a connect exchange. */
    static CmException.Reason reason(IOException e) {
        if (e instanceof BindException) {
            // this node's own address cannot be bound: configuration, which no retry fixes
            return CmException.Reason.BAD_ADDRESS;
        }
        if (e instanceof ConnectException) {
            return CmException.Reason.REFUSED;
        }
        if (e instanceof NoRouteToHostException) {
            return CmException.Reason.UNREACHABLE;
        }
        return CmException.Reason.RESET;
    }

    static String describe(PortAddress address, IOException e) {
        if (e instanceof ConnectException) {
            return "connection refused: nothing listens at " + address + " (" + e.getMessage() + ")";
        }
        if (e instanceof NoRouteToHostException) {
            return "host unreachable: no route to " + address + " (" + e.getMessage() + ")";
        }
        return "cannot reach " + address + ": " + e;
    }

}
