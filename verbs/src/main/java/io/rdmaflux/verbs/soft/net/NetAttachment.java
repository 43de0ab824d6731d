package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.FrameTransport;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.Route;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFrame;
import io.rdmaflux.verbs.soft.SoftPort;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One NIC's view of a {@link NetTransport}: its ports' sockets, its RC streams, and one
 * {@link Selector} over all of them, polled with {@code selectNow} (one system call per engine
 * pass). While the NIC has at most {@value #DIRECT_READ_STREAMS} RC streams and no UD queue pair,
 * the streams are busy-polled with direct reads instead and the selector runs only now and then
 * (see {@link #readStreamsDirectly}). Engine thread only, except {@code bind}, {@code resolve} (setup) and {@code close}.
 */
final class NetAttachment implements FrameTransport.Attachment {
    private final NetTransport transport;
    private final SoftDevice nic;
    private final Selector selector;
    private final List<BoundPort> ports = new ArrayList<>();
    private final List<RcStream> outbound = new ArrayList<>();
    private final List<InboundStream> inbound = new ArrayList<>();
    private final ByteBuffer udpTx = NetFrameCodec.direct(NetFrameCodec.HEADER_BYTES + SoftFrame.MAX_OWN_PAYLOAD);
    private final ByteBuffer udpRx = NetFrameCodec.direct(NetFrameCodec.HEADER_BYTES + SoftFrame.MAX_OWN_PAYLOAD + 1);
    private final Consumer<SelectionKey> onReady = this::onReady;
    private final ArrayList<InboundStream> backlogged = new ArrayList<>();
    private final ArrayList<RcStream> dirty = new ArrayList<>();
    /** Streams released locally, discarding until the peer closes its side (see {@link RcStream#release}). */
    private final ArrayList<InboundStream> lingering = new ArrayList<>();
    private long nowNs;
    private int budget;
    /** This pass reads RC streams directly rather than through the selector (see {@link #readStreamsDirectly}). */
    private boolean direct;
    private int passesSinceSelect;
    private long lastSelectNs;
    /** Up to this many RC streams are busy-polled with direct reads; more go through the selector alone. */
    static final int DIRECT_READ_STREAMS = 8;
    /** While streams are busy-polled, the selector runs once per this many passes ... */
    static final int SELECT_EVERY_PASSES = 64;
    /** ... or this often, ns, whichever comes first. */
    static final long SELECT_EVERY_NS = 100_000;
    private volatile boolean closed;
    private final NetPeerFilter filter;

    NetAttachment(NetTransport transport, SoftDevice nic) {
        this.transport = transport;
        this.filter = transport.config.peerFilter();
        this.nic = nic;
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new VerbsException("cannot open a selector for device '" + nic.name() + "' on the net fabric: " + e, e);
        }
    }

    /** One bound NIC port: its UDP socket and TCP listener. */
    private static final class BoundPort {
        final int number;
        final InetAddress ip;
        final DatagramChannel udp;
        final ServerSocketChannel tcp;
        final PortAddress address;

        BoundPort(int number, InetAddress ip, DatagramChannel udp, ServerSocketChannel tcp, PortAddress address) {
            this.number = number;
            this.ip = ip;
            this.udp = udp;
            this.tcp = tcp;
            this.address = address;
        }
    }

    @Override
    public synchronized PortAddress bind(SoftPort port) {
        NetTransportConfig cfg = transport.config;
        InetAddress ip = cfg.addressOfPort(port.number());
        int wanted = cfg.basePort() == 0 ? 0 : cfg.basePort() + port.number() - 1;
        if (wanted > 65535) {
            throw new VerbsException("port " + port.number() + " of device '" + nic.name() + "' would bind UDP/TCP port " + wanted
                + " (basePort " + cfg.basePort() + " + " + (port.number() - 1) + "), above 65535; lower basePort");
        }
        IOException last = null;
        for (int attempt = 0; attempt < (wanted == 0 ? 16 : 1); attempt++) {
            ServerSocketChannel tcp = null;
            DatagramChannel udp = null;
            try {
                tcp = ServerSocketChannel.open();
                tcp.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                tcp.bind(new InetSocketAddress(ip, wanted), 64);
                int actual = ((InetSocketAddress) tcp.getLocalAddress()).getPort();
                udp = DatagramChannel.open(ip instanceof java.net.Inet6Address
                    ? java.net.StandardProtocolFamily.INET6 : java.net.StandardProtocolFamily.INET);
                udp.setOption(StandardSocketOptions.SO_RCVBUF, cfg.udpReceiveBufferBytes());
                udp.setOption(StandardSocketOptions.SO_SNDBUF, cfg.udpSendBufferBytes());
                udp.bind(new InetSocketAddress(ip, actual));
                tcp.configureBlocking(false);
                udp.configureBlocking(false);
                BoundPort bp = new BoundPort(port.number(), ip, udp, tcp, new PortAddress(NetTransport.FABRIC, ip.getHostAddress(), actual));
                tcp.register(selector, SelectionKey.OP_ACCEPT, bp);
                udp.register(selector, SelectionKey.OP_READ, bp);
                ports.add(bp);
                return bp.address;
            } catch (IOException e) {
                closeQuietly(tcp);
                closeQuietly(udp);
                last = e;
                if (!(e instanceof BindException)) {
                    break;
                }
            }
        }
        String where = "net://" + ip.getHostAddress() + ":" + wanted;
        // the NIC does not come up when a port fails to bind, and nothing else would close us
        close();
        if (last instanceof BindException) {
            throw new VerbsException("cannot bind port " + port.number() + " of device '" + nic.name() + "' at " + where + ": "
                + last.getMessage() + " (address in use, or " + ip.getHostAddress() + " is not an address of this host); "
                + "pick a free basePort, 0 for any, or a local IP", last);
        }
        throw new VerbsException("cannot bind port " + port.number() + " of device '" + nic.name() + "' at " + where + ": " + last, last);
    }

    @Override
    public Route resolve(PortAddress address) {
        return new NetTransport.NetRoute(address, NetTransport.socketAddress(address), this);
    }

    @Override
    public void transmit(SoftFrame frame) {
        Route r = frame.route;
        if (closed || !(r instanceof NetTransport.NetRoute route) || route.owner != this) {
            frame.release();
            return;
        }
        if (frame.type == FrameType.UD_SEND) {
            sendDatagram(route, frame);
            return;
        }
        RcStream s = route.stream;
        if (s == null) {
            s = streamFor(route, frame);
            route.stream = s;
            outbound.add(s);
        }
        s.transmit(frame);
    }

    /**
     * The send half for a new RC route: the connection the peer already opened for this QP pair
     * when there is one (so the pair shares one TCP connection), else a new connection.
     */
    private RcStream streamFor(NetTransport.NetRoute route, SoftFrame first) {
        InetAddress peer = route.socketAddress.getAddress();
        // newest first: after the peer renewed a stalled connection, the new one carries the pair too
        for (int i = inbound.size() - 1; i >= 0; i--) {
            InboundStream in = inbound.get(i);
            if (in.carries(peer, first.destinationQpn, first.sourceQpn)) {
                return RcStream.over(transport, this, in, route);
            }
        }
        RcStream s = new RcStream(transport, this, route);
        s.open(localAddressFor(peer));
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
    @Override
    public void releaseRoute(Route r, int localQpn, int remoteQpn) {
        if (closed || !(r instanceof NetTransport.NetRoute route) || route.owner != this) {
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
                RcStream.over(transport, this, in, route).release(localQpn, remoteQpn);
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
    @Override
    public void routeStalled(Route r, long nowNs) {
        if (closed || !(r instanceof NetTransport.NetRoute route) || route.owner != this) {
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
        RcStream n = RcStream.renewal(transport, this, route, s.localQpn(), s.remoteQpn());
        route.stream = n;
        outbound.add(n);
        transport.streamsRenewed.incrementAndGet();
        if (!s.isBroken()) {
            s.retire(null);
            keepRetired(route, s);
        }
        n.open(localAddressFor(route.socketAddress.getAddress()));
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
        if (closed || peer == null || in.writer != null) {
            return;
        }
        for (int i = 0; i < outbound.size(); i++) {
            RcStream w = outbound.get(i);
            if (w.isActiveFor(peer, localQpn, remoteQpn)) {
                NetTransport.NetRoute route = w.route();
                RcStream n = RcStream.over(transport, this, in, route);
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
    private void expireLingering(long nowNs) {
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

    /** {@code s} no longer carries its route (released or broken); it is not closed again with the NIC. */
    void forgetOutbound(RcStream s) {
        if (!closed) {
            outbound.remove(s);
        }
    }

    /** Test seam: every connection open now stops carrying anything from this end ({@link InboundStream#stalledForTest}). */
    void stallOpenStreamsForTest() {
        for (InboundStream s : inbound) {
            s.stalledForTest = true;
        }
    }

    /** A receive half for a connection a local {@link RcStream} opens. */
    InboundStream reader(SocketChannel ch) {
        InboundStream r = new InboundStream(transport, nic, ch, this);
        inbound.add(r);
        return r;
    }

    /** A stream of {@code route} broke (engine thread): the NIC fails the QPs bound to it. */
    void routeBroken(NetTransport.NetRoute route, String reason) {
        if (!closed) {
            nic.routeBroken(route, reason);
        }
    }

    void markDirty(RcStream s) {
        dirty.add(s);
    }

    @Override
    public void flush() {
        ArrayList<RcStream> d = dirty;
        int held = 0;
        long ackDelayNs = transport.config.ackCoalescingNs();
        for (int i = 0; i < d.size(); i++) {
            RcStream s = d.get(i);
            if (s.flushQueued(nowNs, ackDelayNs)) {
                d.set(held++, s);
            }
        }
        for (int i = d.size() - 1; i >= held; i--) {
            d.remove(i);
        }
    }

    /** The NIC's time at the last {@link #poll}. */
    long nowNs() {
        return nowNs;
    }

    Selector selector() {
        return selector;
    }

    private void sendDatagram(NetTransport.NetRoute route, SoftFrame f) {
        ByteBuffer b = udpTx;
        int payload = f.length;
        NetFrameCodec.encodeHeader(f, b, 0);
        int pos = NetFrameCodec.HEADER_BYTES;
        for (int i = 0; i < f.payloadCount; i++) {
            b.put(pos, f.payloadBuffers[i], f.payloadOffsets[i], f.payloadLengths[i]);
            pos += f.payloadLengths[i];
        }
        f.release();
        b.limit(NetFrameCodec.HEADER_BYTES + payload).position(0);
        BoundPort from = portFor(route.socketAddress.getAddress());
        try {
            if (from.udp.send(b, route.socketAddress) == 0) {
                transport.datagramsDroppedAtSend.incrementAndGet();
            }
        } catch (IOException e) {
            // UD is unreliable: an unreachable destination loses the datagram, as a fabric would.
            transport.datagramsDroppedAtSend.incrementAndGet();
        } finally {
            b.clear();
        }
    }

    /** The bound port whose IP shares the longest prefix with {@code destination} (the rail towards it). */
    private BoundPort portFor(InetAddress destination) {
        byte[] d = destination.getAddress();
        BoundPort best = ports.get(0);
        int bestBits = -1;
        for (BoundPort p : ports) {
            byte[] a = p.ip.getAddress();
            if (a.length != d.length) {
                continue;
            }
            int bits = 0;
            for (int i = 0; i < a.length; i++) {
                int x = (a[i] ^ d[i]) & 0xFF;
                if (x == 0) {
                    bits += 8;
                    continue;
                }
                bits += Integer.numberOfLeadingZeros(x) - 24;
                break;
            }
            if (bits > bestBits) {
                bestBits = bits;
                best = p;
            }
        }
        return best;
    }

    private InetAddress localAddressFor(InetAddress destination) {
        return portFor(destination).ip;
    }

    @Override
    public int poll(long nowNs, int limit) {
        if (closed) {
            return 0;
        }
        this.nowNs = nowNs;
        this.budget = limit;
        int before = limit;
        if (!lingering.isEmpty()) {
            expireLingering(nowNs);
        }
        if (!backlogged.isEmpty()) {
            for (int i = 0; i < backlogged.size() && budget > 0; i++) {
                InboundStream s = backlogged.get(i);
                s.backlogged = false;
                budget -= s.deliver(nowNs, budget);
            }
            backlogged.removeIf(s -> !s.backlogged);
        }
        int streams = inbound.size();
        direct = streams > 0 && streams <= DIRECT_READ_STREAMS && nic.udQueuePairCount() == 0;
        if (direct) {
            readStreamsDirectly();
        }
        try {
            if (budget > 0 && (!direct || ++passesSinceSelect >= SELECT_EVERY_PASSES || nowNs - lastSelectNs >= SELECT_EVERY_NS)) {
                passesSinceSelect = 0;
                lastSelectNs = nowNs;
                selector.selectNow(onReady);
            }
        } catch (IOException e) {
            throw new VerbsException("selector of device '" + nic.name() + "' failed: " + e, e);
        }
        return before - budget;
    }

    /**
     * Waits in the selector (see {@link FrameTransport.Attachment#awaitWork}) for a readable,
     * writable, acceptable or connected socket, {@link #wakeup()}, or {@code timeoutNs} rounded down to
     * whole milliseconds. Ready keys are not consumed: the selector is level-triggered, so the next
     * {@link #poll} finds them again. Returns false at once (no wait) when the timeout is under 1 ms
     * or frames are still queued for a write or for the NIC.
     */
    @Override
    public boolean awaitWork(long timeoutNs) {
        long ms = timeoutNs / 1_000_000;
        if (ms < 1 || closed || !dirty.isEmpty() || !backlogged.isEmpty()) {
            return false;
        }
        try {
            selector.select(IGNORE_READY, ms);
            return true;
        } catch (IOException | java.nio.channels.ClosedSelectorException e) {
            return false;
        }
    }

    @Override
    public void wakeup() {
        if (!closed) {
            selector.wakeup();
        }
    }

    private static final Consumer<SelectionKey> IGNORE_READY = key -> { };

    /**
     * Busy-polls each RC stream with one non-blocking read (and retries a blocked write), as a
     * latency-bound TCP ping-pong does: a frame that arrived costs one {@code read} instead of an
     * {@code epoll_wait} plus a {@code read}, and an idle pass one {@code read} per stream. The
     * selector still runs every {@value #SELECT_EVERY_PASSES} passes (or {@value #SELECT_EVERY_NS} ns)
     * for accepts, connects and stray datagrams. Counted down: a stream that closes removes itself.
     */
    private void readStreamsDirectly() {
        for (int i = inbound.size() - 1; i >= 0 && budget > 0; i--) {
            if (i >= inbound.size()) {
                continue;
            }
            InboundStream s = inbound.get(i);
            RcStream w = s.writer;
            if (w != null && !w.isConnected()) {
                continue;
            }
            if (!s.backlogged) {
                budget -= s.onReadable(nowNs, budget);
                if (s.backlogged) {
                    backlogged.add(s);
                }
            }
            if (w != null && w.isWriteBlocked()) {
                w.onWritable();
            }
        }
    }

    private void onReady(SelectionKey key) {
        Object a = key.attachment();
        if (!key.isValid()) {
            return;
        }
        if (a instanceof InboundStream s) {
            RcStream w = s.writer;
            if (key.isConnectable()) {
                if (w != null) {
                    w.onConnectable(key);
                }
                return;
            }
            if (key.isReadable() && budget > 0 && !s.backlogged && !direct) {
                budget -= s.onReadable(nowNs, budget);
                if (s.backlogged) {
                    backlogged.add(s);
                }
            }
            if (w != null && key.isValid() && key.isWritable() && !direct) {
                w.onWritable();
            }
        } else if (a instanceof BoundPort p) {
            if (key.isAcceptable()) {
                accept(p);
            }
            if (key.isValid() && key.isReadable()) {
                receiveDatagrams(p);
            }
        }
    }

    private void accept(BoundPort p) {
        try {
            SocketChannel ch;
            while ((ch = p.tcp.accept()) != null) {
                if (!admitted(ch)) {
                    transport.peersRefused.incrementAndGet();
                    closeQuietly(ch);
                    continue;
                }
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                if (transport.config.tcpBufferBytes() > 0) {
                    ch.setOption(StandardSocketOptions.SO_RCVBUF, transport.config.tcpBufferBytes());
                }
                InboundStream s = new InboundStream(transport, nic, ch, this);
                s.key(ch.register(selector, SelectionKey.OP_READ, s));
                inbound.add(s);
            }
        } catch (IOException e) {
            // a connection reset before accept completed; the listener itself stays usable
            transport.streamsBroken.incrementAndGet();
        }
    }

    private boolean admitted(SocketChannel ch) {
        if (filter.admitsAny()) {
            return true;
        }
        try {
            return filter.admits(((InetSocketAddress) ch.getRemoteAddress()).getAddress());
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    void forget(InboundStream s) {
        inbound.remove(s);
        backlogged.remove(s);
        if (s.isDraining()) {
            lingering.remove(s);
        }
    }

    private void receiveDatagrams(BoundPort p) {
        ByteBuffer b = udpRx;
        while (budget > 0) {
            b.clear();
            try {
                java.net.SocketAddress from = p.udp.receive(b);
                if (from == null) {
                    return;
                }
                if (!filter.admitsAny() && !filter.admits(((InetSocketAddress) from).getAddress())) {
                    transport.peersRefused.incrementAndGet();
                    continue;
                }
            } catch (IOException e) {
                return;
            }
            int n = b.position();
            if (n < NetFrameCodec.HEADER_BYTES
                || NetFrameCodec.validate(b, 0, NetFrameCodec.HEADER_BYTES + SoftFrame.MAX_OWN_PAYLOAD) != NetFrameCodec.Verdict.OK
                || NetFrameCodec.frameLength(b, 0) != n
                || b.get(NetFrameCodec.TYPE_OFFSET) != FrameType.UD_SEND.ordinal()) {
                transport.framesRejected.incrementAndGet();
                continue;
            }
            SoftFrame f = nic.claimFrame();
            long delay = NetFrameCodec.decodeHeader(b, 0, f);
            int len = n - NetFrameCodec.HEADER_BYTES;
            if (len > 0) {
                ByteBuffer own = f.ownPayload(len);
                own.put(0, b, NetFrameCodec.HEADER_BYTES, len);
                f.addPayload(own, 0, len);
            }
            f.deliverAtNs = nowNs + delay;
            budget--;
            if (nic.onFrameArrived(f, nowNs)) {
                f.release();
            }
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        transport.attachments.remove(this);
        for (RcStream s : outbound) {
            s.close();
        }
        outbound.clear();
        for (InboundStream s : new ArrayList<>(inbound)) {
            s.close();
        }
        inbound.clear();
        lingering.clear();
        for (BoundPort p : ports) {
            closeQuietly(p.tcp);
            closeQuietly(p.udp);
        }
        closeQuietly(selector);
    }

    static void closeQuietly(@Nullable AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // closing on a teardown path: nothing left to report to
            }
        }
    }

    @Override
    public String toString() {
        return "net attachment of " + nic.name() + " " + ports.stream().map(p -> p.address).toList();
    }
}
