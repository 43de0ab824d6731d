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
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
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
 * (see {@link #readStreamsDirectly}). It owns that poll, the transmission of frames (RC frames onto
 * their route's stream, UD frames as datagrams) and the lists of streams; its bound ports are
 * {@link NetPorts}', and which stream carries each route is {@link RouteStreams}'.
 *
 * <p><b>Concurrency:</b> engine thread only, except {@code bind}, {@code resolve} (setup) and {@code close}.
 */
final class NetAttachment implements FrameTransport.Attachment {
    private final NetTransport transport;
    private final SoftDevice nic;
    private final Selector selector;
    private final NetPorts ports;
    private final RouteStreams routes;
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
        this.ports = new NetPorts(transport, nic, this, selector, inbound);
        this.routes = new RouteStreams(transport, this, ports, outbound, inbound, lingering);
    }

    @Override
    public synchronized PortAddress bind(SoftPort port) {
        return ports.bind(port);
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
            s = routes.streamFor(route, frame);
            route.stream = s;
            outbound.add(s);
        }
        s.transmit(frame);
    }

    @Override
    public void releaseRoute(Route r, int localQpn, int remoteQpn) {
        routes.releaseRoute(r, localQpn, remoteQpn);
    }

    @Override
    public void routeStalled(Route r, long nowNs) {
        routes.routeStalled(r, nowNs);
    }

    /** See {@link RouteStreams#routeRenewed}. */
    void routeRenewed(InboundStream in, int remoteQpn, int localQpn) {
        routes.routeRenewed(in, remoteQpn, localQpn);
    }

    /** {@code s} no longer counts among its route's retired streams. */
    void forgetRetired(RcStream s) {
        routes.forgetRetired(s);
    }

    /** {@code s} drains after a release; see {@link RouteStreams#lingering}. */
    void lingering(InboundStream s) {
        routes.lingering(s);
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
        NetPorts.BoundPort from = ports.portFor(route.socketAddress.getAddress());
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

    @Override
    public int poll(long nowNs, int limit) {
        if (closed) {
            return 0;
        }
        this.nowNs = nowNs;
        this.budget = limit;
        int before = limit;
        if (!lingering.isEmpty()) {
            routes.expireLingering(nowNs);
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
        } else if (a instanceof NetPorts.BoundPort p) {
            if (key.isAcceptable()) {
                ports.accept(p);
            }
            if (key.isValid() && key.isReadable()) {
                receiveDatagrams(p);
            }
        }
    }

    void forget(InboundStream s) {
        inbound.remove(s);
        backlogged.remove(s);
        if (s.isDraining()) {
            lingering.remove(s);
        }
    }

    private void receiveDatagrams(NetPorts.BoundPort p) {
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
        ports.close();
        closeQuietly(selector);
    }

    boolean isClosed() {
        return closed;
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
        return "net attachment of " + nic.name() + " " + ports.addresses();
    }
}
