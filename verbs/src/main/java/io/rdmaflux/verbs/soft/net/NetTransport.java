package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.FrameTransport;
import io.rdmaflux.verbs.soft.Route;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFabric;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The IP {@link FrameTransport} ({@code net://<ip>:<port>}): each soft NIC port binds one UDP
 * socket and one TCP listener on the same IP and port number. UD frames travel as one UDP datagram
 * each; RC frames travel over TCP, one stream per RC route, i.e. per connected QP and direction.
 *
 * <h2>Why one TCP connection per QP pair</h2>
 * The NIC resolves a route once per RC QP (at RTR), and the transport's only ordering duty is per
 * route, so a connection per QP pair is the natural unit: a QP's requests and acknowledgements keep
 * their order with no demultiplexing; a stalled or broken connection (a slow reader, a peer that
 * died) stalls or breaks only the QP pair that used it, as a broken iWARP connection terminates its
 * own QP. The side that transmits first opens the connection; the other side's route, on its first
 * frame, finds the accepted connection that carries the reversed QP pair from the same peer IP and
 * sends on it too, so both directions share one connection and the kernel's TCP acknowledgements
 * ride on the data (two one-way connections cost about 7 µs more per round trip on loopback). If
 * both sides transmit before either sees the other's connection, each keeps its own, which is
 * equally correct. The cost is one socket per QP pair, which suits the few QPs (one per rail and
 * peer) rdmaflux opens. A connection per port pair would share one socket among QPs but put every
 * QP behind the head-of-line blocking of the largest message of any of them.
 *
 * <h2>Data path</h2>
 * RC: small frames are copied into a per-stream staging buffer and written together (several
 * frames per system call); a frame above 16 KiB is written by reference from the sender's
 * registered memory, with its header, in one gathering write, so an RDMA WRITE is copied once
 * into the kernel at the sender. The receiver reads frames into a per-stream buffer and hands them
 * to its NIC, which checks rkey, bounds and access and copies the data into the registered region
 * itself. Nothing blocks: a stream that cannot take more keeps the rest queued and is flushed when
 * writable. UD: header and payload are copied into one datagram and sent at once; a datagram the
 * socket cannot take is dropped (UD is unreliable), and counted.
 *
 * <h2>Broken streams</h2>
 * A stream whose peer closes it, resets it, or cannot be reached is broken: its queued frames are
 * released, later frames for its route are dropped (counted), and the NIC is told
 * ({@link SoftDevice#routeBroken}): the QP on that route goes to ERROR in the NIC's next engine
 * pass, whether it sends or only receives, its oldest unacknowledged send completing with
 * RETRY_EXC_ERR and everything else, posted receives included, with WR_FLUSH_ERR. That is well
 * within the bound of the NIC's own transport retry, {@code (retryCount + 1) * retryTimeoutNs} of
 * the QP's {@link io.rdmaflux.verbs.QpInitAttributes}, which still covers a peer that stops
 * answering without closing the stream. A new QP to the same peer gets a new stream.
 * Because TCP does not lose frames, a QP on the net fabric should set {@code retryTimeoutNs} above
 * the time its outstanding requests take on the wire (seconds on slow links); a shorter timeout is
 * safe but retransmits.
 *
 * <h2>Stalled streams</h2>
 * TCP repairs loss with its own retransmission timer, which doubles while nothing is acknowledged (Linux:
 * 200 ms minimum, then 400, 800 ms ... up to 120 s). Behind a link that goes down, a connection's
 * retransmissions back off, and once the link is back the connection stays silent until the next of
 * them fires: up to about the outage again, however soon the link returned. The QP's own retry cannot
 * help, since its retransmissions queue behind the stalled bytes in the same stream; and sending more
 * does not wake a connection in that state. Hence: when an RC QP's ACK timer expires
 * ({@link FrameTransport.Attachment#routeStalled}) and its route's connection has read nothing for
 * {@link NetTransportConfig#renewSilenceNs()} (100 ms), the route is <b>renewed</b>: a new connection
 * is opened (its SYN leaves at once), its first frame a <b>route renew</b> ({@link NetFrameCodec}), and
 * the retransmissions the expiry triggers go on it. The peer, reading the renew, moves its own send half
 * of the QP pair onto the new connection, so its acknowledgements do not queue behind its own stalled
 * bytes either. The old connections are <b>retired</b>, not closed: each side stops sending on them
 * but still reads them and hands what arrives to the NIC (the RC layer drops duplicates by PSN), and
 * their end is no broken route. Closing one instead would let the kernel answer the peer's late
 * retransmissions with a reset, which the peer would take for a dead host. At most
 * {@value RouteStreams#MAX_RETIRED} retired connections stay per route; an older one is released
 * (as in "Route release"), as all are when the QP is destroyed. A renewal that cannot connect (the
 * link is still down) is dropped quietly, its QP's next expiry renews again. So a QP whose rail comes
 * back recovers within about one retry timeout plus a connect, not at TCP's next backed-off retry;
 * it still fails with RETRY_EXC_ERR if the outage outlasts {@code (retryCount + 1) * retryTimeoutNs}.
 * No socket option does this from Java: {@code TCP_USER_TIMEOUT} (not in the JDK) only ends a
 * connection sooner, keepalives ({@code jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE} ...) are not sent
 * while data is unacknowledged, and neither shortens the backed-off timer. {@link #streamsRenewed()}
 * and {@link #streamsRenewedByPeer()} count renewals.
 *
 * <h2>Route release</h2>
 * A connection lives as long as its QP pair, not as long as the NIC: when an RC QP is destroyed, its
 * NIC releases the route ({@link FrameTransport.Attachment#releaseRoute}) in its next engine pass.
 * The stream writes what it still has queued (the last acknowledgements), then a <b>route release</b>
 * frame (the net fabric's own, see {@link NetFrameCodec}), then half-closes the connection (FIN), and
 * reads and discards what arrives until the peer closes its side. The peer, reading the release, closes
 * the connection without reporting its route broken: its QP is not failed for it, because a destroyed
 * peer QP is not a dead host. Like an RC QP on InfiniBand whose peer QP was destroyed, it fails with
 * RETRY_EXC_ERR only if it sends again and nothing answers: the route forgets the released stream, a
 * later frame opens a new connection, and the peer's NIC drops frames for a QP it no longer has. If both
 * QPs are destroyed at once, both release frames cross and each side closes on the other's FIN. A peer
 * that never closes its side is cut off after {@link NetTransportConfig#releaseLingerNs()} (10 s). A host that
 * dies, or a provider that closes, sends no release: the peer sees EOF or a reset and fails the QPs on
 * those routes, as before. Streams are per QP pair, so no QP shares a stream another QP releases, and
 * a new QP (even one that reuses the QPN) gets a new stream: the release runs before the pass transmits.
 * {@link #openStreams()} counts the connections open now.
 *
 * <h2>Foreign and broken senders</h2>
 * A datagram or stream frame with a wrong magic or version, an unknown type or a length that does
 * not match is dropped and counted ({@link #framesRejected()}); a stream that sent one is closed,
 * since its framing cannot be trusted. Frames for a QPN that does not exist are dropped by the
 * NIC and counted by it ({@link SoftDevice#udDatagramsDropped()}, {@link SoftDevice#rcFramesToUnknownQp()}).
 *
 * <h2>Time</h2>
 * The receiver rebases each frame's delivery time on its own clock: {@code arrival + (deliverAt -
 * sentAt)} of the sender, kept monotone per stream so RC frames never overtake each other.
 *
 * <p><b>Concurrency:</b> as {@link FrameTransport}: one {@link Attachment} per NIC, whose
 * {@code transmit}/{@code poll} run on that NIC's engine thread only; counters are thread-safe.
 * Starts no threads: all I/O is non-blocking and done in {@code transmit} and {@code poll}.
 */
public final class NetTransport implements FrameTransport {
    /** The fabric name in addresses. */
    public static final String FABRIC = "net";

    final NetTransportConfig config;
    final AtomicLong framesRejected = new AtomicLong();
    final AtomicLong framesDroppedOnBrokenStreams = new AtomicLong();
    final AtomicLong datagramsDroppedAtSend = new AtomicLong();
    final AtomicLong streamsBroken = new AtomicLong();
    final AtomicLong streamsOpened = new AtomicLong();
    final AtomicLong streamsRenewed = new AtomicLong();
    final AtomicLong streamsRenewedByPeer = new AtomicLong();
    final AtomicLong peersRefused = new AtomicLong();
    final AtomicLong streamsReleased = new AtomicLong();
    final AtomicLong streamsReleasedByPeer = new AtomicLong();
    final AtomicLong releasesTimedOut = new AtomicLong();
    final java.util.concurrent.atomic.AtomicInteger openStreams = new java.util.concurrent.atomic.AtomicInteger();

    /** A transport binding its ports as {@code config} says. */
    public NetTransport(NetTransportConfig config) {
        this.config = java.util.Objects.requireNonNull(config, "config");
    }

    /** A fabric (no in-JVM registry needed) over a new transport. */
    public static SoftFabric fabric(String name, NetTransportConfig config) {
        return SoftFabric.over(name, new NetTransport(config));
    }

    @Override
    public String fabric() {
        return FABRIC;
    }

    /** The configuration. */
    public NetTransportConfig config() {
        return config;
    }

    /** The attachments made so far (closed ones included), for tests of this package. */
    final java.util.List<NetAttachment> attachments = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public Attachment attach(SoftDevice nic) {
        NetAttachment a = new NetAttachment(this, nic);
        attachments.add(a);
        return a;
    }

    /** Frames and datagrams dropped because their header was malformed (magic, version, type, length). */
    public long framesRejected() {
        return framesRejected.get();
    }

    /**
     * TCP connections (RC streams) and UDP datagrams this transport's NICs refused because their source
     * IP is not admitted by {@link NetTransportConfig#peerFilter()}.
     */
    public long peersRefused() {
        return peersRefused.get();
    }

    /** RC frames dropped because their stream had broken. */
    public long framesDroppedOnBrokenStreams() {
        return framesDroppedOnBrokenStreams.get();
    }

    /** UD datagrams the local socket could not take (send buffer full). */
    public long datagramsDroppedAtSend() {
        return datagramsDroppedAtSend.get();
    }

    /** RC streams that broke (peer closed or reset them, connect failed, or they sent garbage). */
    public long streamsBroken() {
        return streamsBroken.get();
    }

    /**
     * RC stream connections open now (opened or accepted, draining ones included): one socket, so one
     * file descriptor, each. Any thread; may be stale by an engine pass.
     */
    public int openStreams() {
        return openStreams.get();
    }

    /** RC streams this transport's NICs released because their QP was destroyed (route release frame written). */
    public long streamsReleased() {
        return streamsReleased.get();
    }

    /** RC streams that ended with the peer's route release frame (the peer's QP was destroyed). */
    public long streamsReleasedByPeer() {
        return streamsReleasedByPeer.get();
    }

    /**
     * Released streams closed at the linger bound ({@link NetTransportConfig#releaseLingerNs()}) because
     * the peer had not closed its side by then.
     */
    public long releasesTimedOut() {
        return releasesTimedOut.get();
    }

    /**
     * RC streams this transport's NICs opened to replace a stalled one (an RC ACK timer expired; see
     * "Stalled streams"), counted when opened, whether they connected or not.
     */
    public long streamsRenewed() {
        return streamsRenewed.get();
    }

    /** Route renew frames this transport's NICs read: a peer replaced a stalled stream of a QP pair. */
    public long streamsRenewedByPeer() {
        return streamsRenewedByPeer.get();
    }

    /** RC streams opened by this transport's NICs. */
    public long streamsOpened() {
        return streamsOpened.get();
    }

    /**
     * Checks and resolves a {@code net://host:port} address (setup path).
     *
     * @throws VerbsException naming the address if it is not on the net fabric or its host is unknown
     */
    static InetSocketAddress socketAddress(PortAddress address) {
        return socketAddress(address, false);
    }

    /** As {@link #socketAddress(PortAddress)}; {@code anyPort} allows port 0 (listen on any free port). */
    static InetSocketAddress socketAddress(PortAddress address, boolean anyPort) {
        if (!FABRIC.equals(address.fabric())) {
            throw new VerbsException("address " + address + " is not on the net fabric; use net://<ip>:<port>");
        }
        if (address.port() == 0 && !anyPort) {
            throw new VerbsException("address " + address + " has port 0; a net address needs the peer's UDP/TCP port");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(address.host()), address.port());
        } catch (UnknownHostException e) {
            throw new VerbsException("unknown host '" + address.host() + "' in address " + address
                + ": not an IP address and not resolvable; use the peer's IP address", e);
        }
    }

    /** The route type of this transport. */
    static final class NetRoute implements Route {
        final PortAddress destination;
        final InetSocketAddress socketAddress;
        final NetAttachment owner;
        @org.jspecify.annotations.Nullable RcStream stream;
        /** Streams this route replaced ({@link RcStream#retire}), oldest first; at most {@link RouteStreams#MAX_RETIRED}. */
        final java.util.ArrayList<RcStream> retired = new java.util.ArrayList<>(RouteStreams.MAX_RETIRED + 1);

        NetRoute(PortAddress destination, InetSocketAddress socketAddress, NetAttachment owner) {
            this.destination = destination;
            this.socketAddress = socketAddress;
            this.owner = owner;
        }

        @Override
        public PortAddress destination() {
            return destination;
        }

        @Override
        public String toString() {
            return "route to " + destination;
        }
    }
}
