package io.rdmaflux.verbs.soft;

import org.jspecify.annotations.Nullable;

/**
 * Whether an arriving RC frame comes from the host its queue pair is connected to. A responder already
 * takes requests only from its peer's QPN; this adds the peer's host, so on the net fabric a host
 * that opens its own TCP stream to a NIC port and names a real QPN pair (QPNs are small numbers, easily
 * guessed) is not heard: its frames are dropped and counted ({@link SoftDevice#rcForeignFramesDropped()}),
 * and they neither complete nor NAK anything, so they cannot tear down the connection either.
 *
 * <p>The host is the one the transport saw ({@link SoftFrame#sourceHost}: the TCP peer's IP, bound by
 * the sending NIC to its port's IP; the device name on the in-JVM fabric), compared with the host of
 * the QP's route. Not a cryptographic check: a host that can spoof the peer's IP on the path can still
 * inject (the net fabric does not authenticate or encrypt; see the README).
 */
final class SoftPeerCheck {
    private SoftPeerCheck() {
    }

    static boolean fromConnectedPeer(SoftQueuePair qp, SoftFrame f) {
        String host = f.sourceHost;
        if (host == null) {
            return true;
        }
        Route r = qp.route();
        if (r == null) {
            // not connected yet: the responder drops it on its state
            return true;
        }
        @Nullable String peer = r.destination().host();
        return host.equals(peer);
    }
}
