package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.soft.FrameTransport;
import io.rdmaflux.verbs.soft.Route;
import io.rdmaflux.verbs.soft.SoftFrame;
import java.net.InetAddress;
import java.util.List;

/**
 * Which RC stream carries each route of one {@link NetAttachment}: the stream a new route starts on (a
 * connection the peer already opened for the QP pair, else a new one), its renewal when the route stalls
 * or the peer renews it, the retired streams a route keeps, and the release of a destroyed QP pair's
 * connections, which linger until the peer closes its side.
 *
 * <p><b>Concurrency:</b> engine thread only, like the attachment whose stream lists it shares.
 */
final class RouteStreams {
    private final NetTransport transport;
    private final NetAttachment owner;
    private final NetPorts ports;
    /** The attachment's send halves (shared with it). */
    private final List<RcStream> outbound;
    /** The attachment's receive halves (shared with it). */
    private final List<InboundStream> inbound;
    /** Streams released locally, discarding until the peer closes its side (shared with the attachment). */
    private final List<InboundStream> lingering;

    RouteStreams(NetTransport transport, NetAttachment owner, NetPorts ports, List<RcStream> outbound,
                 List<InboundStream> inbound, List<InboundStream> lingering) {
        this.transport = transport;
        this.owner = owner;
        this.ports = ports;
        this.outbound = outbound;
        this.inbound = inbound;
        this.lingering = lingering;
    }

    /**
     * The send half for a new RC route: the connection the peer already opened for this QP pair
     * when there is one (so the pair shares one TCP connection), else a new connection.
     */
    RcStream streamFor(NetTransport.NetRoute route, SoftFrame first) {
        InetAddress peer = route.socketAddress.getAddress();
        // newest first: after the peer renewed a stalled connection, the new one carries the pair too
        for (int i = inbound.size() - 1; i >= 0; i--) {
            InboundStream in = inbound.get(i);
            if (in.carries(peer, first.destinationQpn, first.sourceQpn)) {
                return RcStream.over(transport, owner, in, route);
            }
        }
        RcStream s = new RcStream(transport, owner, route);
        s.open(ports.localAddressFor(peer));
        InboundStream r = s.reader();
        if (r != null) {
            // its silence (see routeStalled) counts from the connect: a SYN lost to a link not yet back
            // is retried by the kernel only a second later, a renewal at the QP's next stall
            r.lastReadNs = first.sentAtNs;
        }
        return s;
    }

    /**
     * Releases the connections of the destroyed QP pair {@code (localQpn -> remoteQpn)} on {@code r}
     * (engine thread): the route's own stream, and a connection the peer opened for the pair that no
     * local send half took over (when both sides opened one). Each gets the route release frame after
     * what is queued on it, then is half-closed; see {@link RcStream#release}.
     */
    void releaseRoute(Route r, int localQpn, int remoteQpn) {
        if (owner.isClosed() || !(r instanceof NetTransport.NetRoute route) || route.owner != owner) {
            return;
        }
        RcStream s = route.stream;
        if (s != null) {
            s.release(localQpn, remoteQpn);
        }
        for (int i = route.retired.size() - 1; i >= 0; i--) {
            if (i < route.retired.size()) {
                route.retired.get(i).release(localQpn, remoteQpn);
            }
        }
        route.retired.clear();
        InetAddress peer = route.socketAddress.getAddress();
        for (int i = inbound.size() - 1; i >= 0; i--) {
            InboundStream in = inbound.get(i);
            if (in.carries(peer, remoteQpn, localQpn)) {
                RcStream.over(transport, owner, in, route).release(localQpn, remoteQpn);
            }
        }
    }

    /**
     * An RC QP on {@code r} found no acknowledgement for its retry timeout (see
     * {@link FrameTransport.Attachment#routeStalled}; engine thread): the route's stream is replaced by a
     * new connection, whose first frame is a route renew, so the retransmissions that follow leave on it
     * at once instead of waiting behind the old connection's backed-off TCP retransmission timer. The old
     * stream is retired ({@link RcStream#retire}). Nothing happens for a route that has no stream or is
     * being released, whose stream broke for good (its QP is failing anyway), or whose connection read
     * something within {@link NetTransportConfig#renewSilenceNs()}.
     */
    void routeStalled(Route r, long nowNs) {
        if (owner.isClosed() || !(r instanceof NetTransport.NetRoute route) || route.owner != owner) {
            return;
        }
        RcStream s = route.stream;
        if (s == null || s.isReleasing() || !s.pairKnown() || (s.isBroken() && !s.isBrokenQuietly())) {
            return;
        }
        InboundStream heard = s.reader();
        if (!s.isBroken() && heard != null) {
            if (heard.lastReadNs == InboundStream.NEVER_READ) {
                // a connection that never read anything (its peer answers on a connection of its own):
                // its silence counts from this first stall
                heard.lastReadNs = nowNs;
                return;
            }
            if (nowNs - heard.lastReadNs < transport.config.renewSilenceNs()) {
                // the connection spoke recently: not TCP backing off behind a dead link (its minimum RTO
                // is 200 ms), rather a retry timeout shorter than the round trip; a new one would not help
                return;
            }
        }
        RcStream n = RcStream.renewal(transport, owner, route, s.localQpn(), s.remoteQpn());
        route.stream = n;
        outbound.add(n);
        transport.streamsRenewed.incrementAndGet();
        if (!s.isBroken()) {
            s.retire(null);
            keepRetired(route, s);
        }
        n.open(ports.localAddressFor(route.socketAddress.getAddress()));
        InboundStream fresh = n.reader();
        if (fresh != null) {
            // a renewal whose connect is lost (the link not back yet) is renewed again at the next stall
            fresh.lastReadNs = nowNs;
        }
    }

    /**
     * {@code in}, a connection the peer opened, starts with a route renew for the pair
     * {@code (remoteQpn -> localQpn)}: the peer replaced a stalled connection of that pair. The local send
     * half of the pair, if any, moves onto {@code in} (with the frames it still had queued) and the old
     * one is retired: its stalled TCP stream could otherwise hold this side's acknowledgements back as
     * long as it held the peer's requests.
     */
    void routeRenewed(InboundStream in, int remoteQpn, int localQpn) {
        transport.streamsRenewedByPeer.incrementAndGet();
        InetAddress peer = in.remoteAddress();
        if (owner.isClosed() || peer == null || in.writer != null) {
            return;
        }
        for (int i = 0; i < outbound.size(); i++) {
            RcStream w = outbound.get(i);
            if (w.isActiveFor(peer, localQpn, remoteQpn)) {
                NetTransport.NetRoute route = w.route();
                RcStream n = RcStream.over(transport, owner, in, route);
                n.pair(localQpn, remoteQpn);
                route.stream = n;
                outbound.add(n);
                w.retire(n);
                keepRetired(route, w);
                return;
            }
        }
    }

    /** At most this many retired streams per route stay open; the oldest beyond is released. */
    static final int MAX_RETIRED = 2;

    private void keepRetired(NetTransport.NetRoute route, RcStream s) {
        if (s.isBroken()) {
            return;
        }
        route.retired.add(s);
        if (route.retired.size() > MAX_RETIRED) {
            RcStream oldest = route.retired.remove(0);
            // a release, not a close: a peer still sending on it forgets it rather than failing its QP
            oldest.release(oldest.localQpn(), oldest.remoteQpn());
        }
    }

    /** {@code s} no longer counts among its route's retired streams. */
    void forgetRetired(RcStream s) {
        s.route().retired.remove(s);
    }

    /** {@code s} drains after a release; closed at the linger bound if the peer does not close first. */
    void lingering(InboundStream s) {
        s.lingerDeadlineSet = false;
        lingering.add(s);
    }

    /** Closes released streams whose peer let the linger bound pass. */
    void expireLingering(long nowNs) {
        for (int i = lingering.size() - 1; i >= 0; i--) {
            if (i >= lingering.size()) {
                continue;
            }
            InboundStream s = lingering.get(i);
            if (!s.lingerDeadlineSet) {
                s.lingerDeadlineSet = true;
                s.lingerUntilNs = nowNs + transport.config.releaseLingerNs();
            } else if (nowNs - s.lingerUntilNs >= 0) {
                transport.releasesTimedOut.incrementAndGet();
                s.close();
            }
        }
    }
}
