package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.SoftFrame;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * The outbound TCP stream of one RC route: frames in transmission order, written without
 * blocking. Frames of at most {@value #SMALL_FRAME_PAYLOAD} payload bytes are copied into a staging
 * buffer (several per write); a larger one is written by reference from the sender's registered
 * memory, after its header, in one gathering write, and released once fully written. Frames
 * coming back on the same connection (the peer's half of the QP pair) are read by its
 * {@link InboundStream}; EOF or reset there breaks this half too. A broken stream is reported to
 * the NIC ({@link io.rdmaflux.verbs.soft.SoftDevice#routeBroken}), which fails the QPs on its route.
 *
 * <p>Release: when the route's QP is destroyed, {@link #release} writes what is queued, then a route
 * release frame, then half-closes the connection; its reader discards what still arrives until the
 * peer closes its side (see {@link NetTransport}, "Route release"). A release arriving from the peer
 * ({@link #peerReleased}) ends the stream without reporting the route broken.
 *
 * <p>Renewal (see {@link NetTransport}, "Stalled streams"): a stream opened by {@link #renewal} to
 * replace a stalled one writes a route renew frame first, and its failing to connect is not a broken
 * route (the link may still be down; the next stall renews again). A stream replaced by a newer one of
 * its route is <b>retired</b> ({@link #retire}): it takes no new frames but writes out the frame it is
 * in the middle of, its reader still hands what arrives to the NIC (RC drops duplicates by PSN), and
 * its end, whenever the peer or the kernel ends it, is not reported as a broken route.
 *
 * <p>Acknowledgements: ACKs are cumulative, so a queued ACK followed by a newer one is replaced
 * by it, and a lone ACK is held for up to {@link NetTransportConfig#ackCoalescingNs()} so that it
 * leaves in the same write as the next request or response (as NICs and TCP coalesce
 * acknowledgements); a request-response exchange then costs one write per direction.
 * Engine thread only.
 */
final class RcStream {
    static final int SMALL_FRAME_PAYLOAD = 16 << 10;
    private static final int STAGING_BYTES = 256 << 10;
    private static final int MAX_SGE = SendWorkRequest.MAX_SGE;

    private final NetTransport transport;
    private final NetAttachment owner;
    private final NetTransport.NetRoute route;
    private final InetSocketAddress remote;
    private final PortAddress destination;
    private final ArrayDeque<SoftFrame> queue = new ArrayDeque<>();
    private final ByteBuffer staging = NetFrameCodec.direct(STAGING_BYTES);
    private final ByteBuffer[] gather = new ByteBuffer[1 + MAX_SGE];
    private final @Nullable ByteBuffer[] viewSource = new ByteBuffer[MAX_SGE];
    private final @Nullable ByteBuffer[] views = new ByteBuffer[MAX_SGE];
    private @Nullable InboundStream reader;
    private @Nullable SocketChannel channel;
    private @Nullable SelectionKey key;
    private @Nullable SoftFrame large;
    private int largeViews;
    /** A retired stream still writes the copy of its last large frame in {@code views[0]} ({@link #retire}). */
    private boolean retiredLarge;
    private int stageEnd;
    private int stageSent;
    private boolean connected;
    private boolean writeBlocked;
    private boolean broken;
    private boolean dirty;
    private long ackHeldSinceNs;
    /** {@link #release} was called: frames queued before it are written, then the route release frame. */
    private boolean releasing;
    /** The route release frame is in the staging buffer (behind every queued frame). */
    private boolean releaseStaged;
    private int releaseSourceQpn;
    private int releaseDestinationQpn;
    private @Nullable String brokenReason;
    /** The route's QP pair, known from the first frame transmitted (or the renewal that opened it). */
    private boolean pairKnown;
    private int localQpn;
    private int remoteQpn;
    /** Opened by {@link #renewal}: its route renew frame goes first; a failed connect breaks it quietly. */
    private boolean renewal;
    /** Replaced by a newer stream of its route (see {@link #retire}). */
    private boolean retired;
    /** Broken without telling the NIC: a renewal that could not connect, or a retired stream that ended. */
    private boolean brokenQuietly;

    RcStream(NetTransport transport, NetAttachment owner, NetTransport.NetRoute route) {
        this.transport = transport;
        this.owner = owner;
        this.route = route;
        this.remote = route.socketAddress;
        this.destination = route.destination;
        gather[0] = staging;
    }

    /**
     * The send half of a connection the peer opened for the same QP pair (its reader is
     * {@code accepted}): frames go back on the peer's stream, so the QP pair shares one TCP
     * connection and the kernel's acknowledgements ride on the data.
     */
    static RcStream over(NetTransport transport, NetAttachment owner, InboundStream accepted, NetTransport.NetRoute route) {
        RcStream s = new RcStream(transport, owner, route);
        s.channel = accepted.channel();
        s.key = accepted.key();
        s.reader = accepted;
        s.connected = true;
        accepted.writer = s;
        return s;
    }

    /**
     * A stream that replaces a stalled one of {@code route}, for the QP pair {@code (localQpn -> remoteQpn)}:
     * its first frame is the route renew; call {@link #open} next.
     */
    static RcStream renewal(NetTransport transport, NetAttachment owner, NetTransport.NetRoute route, int localQpn, int remoteQpn) {
        RcStream s = new RcStream(transport, owner, route);
        s.renewal = true;
        s.pair(localQpn, remoteQpn);
        NetFrameCodec.encodeRouteRenew(s.staging, 0, localQpn, remoteQpn);
        s.stageEnd = NetFrameCodec.HEADER_BYTES;
        return s;
    }

    void pair(int local, int remote) {
        pairKnown = true;
        localQpn = local;
        remoteQpn = remote;
    }

    boolean pairKnown() {
        return pairKnown;
    }

    int localQpn() {
        return localQpn;
    }

    int remoteQpn() {
        return remoteQpn;
    }

    NetTransport.NetRoute route() {
        return route;
    }

    @Nullable InboundStream reader() {
        return reader;
    }

    boolean isReleasing() {
        return releasing;
    }

    boolean isRetired() {
        return retired;
    }

    /** Broken without the route being reported broken (a renewal that did not connect, a retired stream). */
    boolean isBrokenQuietly() {
        return brokenQuietly;
    }

    /** The route's current send half for the pair {@code (localQpn -> remoteQpn)} to {@code peer}. */
    boolean isActiveFor(InetAddress peer, int local, int peerQpn) {
        return !broken && !releasing && !retired && pairKnown && localQpn == local && remoteQpn == peerQpn
            && route.stream == this && peer.equals(remote.getAddress());
    }

    /**
     * Retires the stream: its route sends on a newer one from now on. Frames still queued (not yet
     * staged) move to {@code successor}, or, without one, are dropped (the RC requester that stalled is
     * retransmitting them anyway). The frame being written, if any, is written out so the peer's framing
     * holds; a large one is copied first, since its work request may complete over the successor and its
     * registered memory go away. A stream that has not connected yet is closed at once. The stream is
     * not closed otherwise: the peer may not have seen the renewal yet and still send on it, and its
     * reader keeps handing frames to the NIC; it ends with the peer, a route release or the NIC.
     */
    void retire(@Nullable RcStream successor) {
        if (broken || releasing || retired) {
            return;
        }
        retired = true;
        SoftFrame f;
        while ((f = queue.poll()) != null) {
            if (successor != null) {
                successor.transmit(f);
            } else {
                transport.framesDroppedOnBrokenStreams.incrementAndGet();
                f.release();
            }
        }
        if (!connected) {
            breakStream("retired before it connected");
            return;
        }
        SoftFrame l = large;
        if (l != null) {
            int rest = 0;
            for (int i = 0; i < largeViews; i++) {
                rest += views[i].remaining();
            }
            ByteBuffer copy = ByteBuffer.allocateDirect(rest);
            for (int i = 0; i < largeViews; i++) {
                copy.put(views[i]);
                views[i] = null;
                viewSource[i] = null;
            }
            copy.flip();
            views[0] = copy;
            viewSource[0] = copy;
            largeViews = 1;
            large = null;
            l.release();
            retiredLarge = true;
        }
    }

    /** Starts the non-blocking connect from {@code local}. */
    void open(InetAddress local) {
        try {
            SocketChannel ch = SocketChannel.open();
            channel = ch;
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            int buf = transport.config.tcpBufferBytes();
            if (buf > 0) {
                ch.setOption(StandardSocketOptions.SO_SNDBUF, buf);
            }
            ch.bind(new InetSocketAddress(local, 0));
            transport.streamsOpened.incrementAndGet();
            InboundStream r = owner.reader(ch);
            r.writer = this;
            reader = r;
            if (ch.connect(remote)) {
                connected = true;
                key = ch.register(owner.selector(), SelectionKey.OP_READ, r);
            } else {
                key = ch.register(owner.selector(), SelectionKey.OP_CONNECT, r);
            }
            r.key(key);
        } catch (IOException | RuntimeException e) {
            breakStream("connect to " + destination + " failed: " + e);
        }
    }

    boolean isBroken() {
        return broken;
    }

    /** Connected (its channel may be read and written). */
    boolean isConnected() {
        return connected;
    }

    /** The socket refused data last time; {@link #onWritable()} retries. */
    boolean isWriteBlocked() {
        return writeBlocked;
    }

    @Nullable String brokenReason() {
        return brokenReason;
    }

    void transmit(SoftFrame f) {
        if (broken || releasing || retired) {
            transport.framesDroppedOnBrokenStreams.incrementAndGet();
            f.release();
            return;
        }
        if (!pairKnown) {
            pair(f.sourceQpn, f.destinationQpn);
        }
        if (f.type == FrameType.ACK) {
            SoftFrame last = queue.peekLast();
            if (last != null && last.type == FrameType.ACK) {
                // cumulative: the newer acknowledgement says everything the older one did
                queue.pollLast();
                last.release();
            } else if (queue.isEmpty()) {
                ackHeldSinceNs = owner.nowNs();
            }
        }
        queue.add(f);
        if (!dirty) {
            dirty = true;
            owner.markDirty(this);
        }
    }

    /**
     * Writes what {@link #transmit} queued, as far as the socket takes it (called at the end of an
     * engine pass); returns true when it held a lone ACK back (the stream stays dirty).
     */
    boolean flushQueued(long nowNs, long ackDelayNs) {
        if (ackDelayNs > 0 && !releasing && queue.size() == 1 && large == null && stageEnd == stageSent
            && queue.peekFirst().type == FrameType.ACK && nowNs - ackHeldSinceNs < ackDelayNs) {
            // hold a lone acknowledgement briefly so it can ride with the next request or response
            return true;
        }
        dirty = false;
        if (connected && !writeBlocked && !broken) {
            flush();
        }
        return false;
    }

    /** The non-blocking connect finished (or failed). */
    void onConnectable(SelectionKey k) {
        if (broken) {
            return;
        }
        try {
            if (!channel.finishConnect()) {
                return;
            }
            connected = true;
            k.interestOps(SelectionKey.OP_READ);
            flush();
        } catch (IOException e) {
            breakStream("connect to " + destination + " failed: " + e);
        }
    }

    /** The socket takes data again. */
    void onWritable() {
        if (broken) {
            return;
        }
        writeBlocked = false;
        flush();
    }

    /** Writes as much as the socket takes. */
    private void flush() {
        InboundStream in = reader;
        if (in != null && in.stalledForTest) {
            return;
        }
        SocketChannel ch = channel;
        try {
            while (true) {
                if (stageEnd == stageSent && large == null && !retiredLarge) {
                    stageEnd = 0;
                    stageSent = 0;
                    if (!fill()) {
                        return;
                    }
                }
                staging.limit(stageEnd).position(stageSent);
                int count = 1;
                if (large != null || retiredLarge) {
                    for (int i = 0; i < largeViews; i++) {
                        gather[1 + i] = views[i];
                    }
                    count += largeViews;
                }
                if (count == 1) {
                    // one buffer: write(2), without the gathering write's iovec set-up
                    ch.write(staging);
                } else {
                    ch.write(gather, 0, count);
                }
                stageSent = staging.position();
                boolean done = stageSent == stageEnd;
                SoftFrame l = large;
                if (l != null || retiredLarge) {
                    for (int i = 0; i < largeViews && done; i++) {
                        done = !views[i].hasRemaining();
                    }
                    if (done) {
                        large = null;
                        retiredLarge = false;
                        if (l != null) {
                            l.release();
                        }
                    }
                }
                if (!done) {
                    if (!writeBlocked) {
                        writeBlocked = true;
                        key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                    }
                    return;
                }
                if (queue.isEmpty()) {
                    if (releasing && !releaseStaged) {
                        // a release that came while a large frame was being written: stage it now
                        continue;
                    }
                    stageEnd = 0;
                    stageSent = 0;
                    if (writeBlocked) {
                        writeBlocked = false;
                    }
                    key.interestOps(SelectionKey.OP_READ);
                    if (releaseStaged) {
                        releaseWritten();
                    }
                    return;
                }
            }
        } catch (IOException e) {
            breakStream("stream to " + destination + " failed: " + e);
        }
    }

    /** Moves queued frames into the staging buffer (and at most one large frame behind it); false when none. */
    private boolean fill() {
        boolean any = false;
        staging.clear();
        SoftFrame f;
        while ((f = queue.peek()) != null) {
            int payload = NetFrameCodec.payloadBytes(f);
            if (payload <= SMALL_FRAME_PAYLOAD) {
                if (STAGING_BYTES - stageEnd < NetFrameCodec.HEADER_BYTES + payload) {
                    break;
                }
                NetFrameCodec.encodeHeader(f, staging, stageEnd);
                int pos = stageEnd + NetFrameCodec.HEADER_BYTES;
                for (int i = 0; i < f.payloadCount && payload > 0; i++) {
                    staging.put(pos, f.payloadBuffers[i], f.payloadOffsets[i], f.payloadLengths[i]);
                    pos += f.payloadLengths[i];
                }
                stageEnd = pos;
                queue.poll();
                f.release();
                any = true;
                continue;
            }
            if (STAGING_BYTES - stageEnd < NetFrameCodec.HEADER_BYTES) {
                break;
            }
            NetFrameCodec.encodeHeader(f, staging, stageEnd);
            stageEnd += NetFrameCodec.HEADER_BYTES;
            for (int i = 0; i < f.payloadCount; i++) {
                ByteBuffer src = f.payloadBuffers[i];
                ByteBuffer v = views[i];
                if (viewSource[i] != src || v == null) {
                    v = src.duplicate();
                    views[i] = v;
                    viewSource[i] = src;
                }
                v.clear();
                v.position(f.payloadOffsets[i]);
                v.limit(f.payloadOffsets[i] + f.payloadLengths[i]);
            }
            largeViews = f.payloadCount;
            large = queue.poll();
            return true;
        }
        if (releasing && !releaseStaged && queue.isEmpty() && STAGING_BYTES - stageEnd >= NetFrameCodec.HEADER_BYTES) {
            NetFrameCodec.encodeRouteRelease(staging, stageEnd, releaseSourceQpn, releaseDestinationQpn);
            stageEnd += NetFrameCodec.HEADER_BYTES;
            releaseStaged = true;
            any = true;
        }
        return any;
    }

    /**
     * Releases the stream, its route's QP {@code localQpn} having been destroyed (engine thread): frames
     * already queued (the last acknowledgements) are written, then a route release frame for the pair
     * {@code (localQpn -> remoteQpn)}, then the connection is half-closed; from now on its reader
     * discards what arrives and closes the connection when the peer closes its side, or when the linger
     * bound passes ({@link NetTransportConfig#releaseLingerNs()}). Later frames for the route are dropped.
     * Nothing is reported to the NIC, even if the connection fails meanwhile. No-op on a broken stream.
     */
    void release(int localQpn, int remoteQpn) {
        if (broken || releasing) {
            return;
        }
        owner.forgetRetired(this);
        releasing = true;
        releaseSourceQpn = localQpn;
        releaseDestinationQpn = remoteQpn;
        owner.forgetOutbound(this);
        InboundStream r = reader;
        if (r != null) {
            r.drain();
        }
        if (!dirty) {
            dirty = true;
            owner.markDirty(this);
        }
    }

    /** The route release frame is written: half-close (FIN); the reader waits for the peer's. */
    private void releaseWritten() {
        broken = true;
        brokenReason = "released";
        transport.streamsReleased.incrementAndGet();
        releaseAll();
        try {
            channel.shutdownOutput();
        } catch (IOException e) {
            InboundStream r = reader;
            if (r != null) {
                r.close();
            }
        }
    }

    /**
     * The peer released the route (its QP was destroyed): queued frames are dropped (counted), the stream
     * ends without reporting the route broken (its reader closes the connection), and the route forgets
     * it, so a later frame of the local QP (a retransmission) opens a new connection as a first frame
     * does, to be refused there as on any fabric whose peer QP is gone.
     */
    void peerReleased() {
        if (broken) {
            return;
        }
        broken = true;
        brokenReason = "released by the peer";
        releaseAll();
        owner.forgetOutbound(this);
        if (route.stream == this) {
            route.stream = null;
        }
    }

    void breakStream(String reason) {
        if (broken) {
            return;
        }
        broken = true;
        brokenReason = reason;
        if (retired || (renewal && !connected)) {
            // a replaced stream ends, or a renewal found the link still down: the route lives on (a
            // renewal's QP retries, and its next stall renews again); nothing to tell the NIC
            brokenQuietly = true;
            owner.forgetOutbound(this);
            owner.forgetRetired(this);
            releaseAll();
            NetAttachment.closeQuietly(channel);
            InboundStream r = reader;
            if (r != null) {
                r.close();
            }
            return;
        }
        if (releasing) {
            // its QP is gone: nothing to tell the NIC, nothing to count
            releaseAll();
            NetAttachment.closeQuietly(channel);
            InboundStream r = reader;
            if (r != null) {
                r.close();
            }
            return;
        }
        owner.forgetOutbound(this);
        transport.streamsBroken.incrementAndGet();
        releaseAll();
        NetAttachment.closeQuietly(channel);
        InboundStream r = reader;
        if (r != null) {
            r.close();
        }
        // TCP does not come back: every QP on this route fails now, including one that only
        // receives and would otherwise never notice (it has no retry timer running).
        owner.routeBroken(route, "the RC stream to " + destination + " broke: " + reason);
    }

    private void releaseAll() {
        SoftFrame l = large;
        large = null;
        retiredLarge = false;
        if (l != null) {
            l.release();
        }
        SoftFrame f;
        while ((f = queue.poll()) != null) {
            transport.framesDroppedOnBrokenStreams.incrementAndGet();
            f.release();
        }
        for (int i = 0; i < MAX_SGE; i++) {
            viewSource[i] = null;
            views[i] = null;
        }
    }

    /**
     * Closes the stream (the NIC is closing, its engine no longer runs). What the last engine
     * passes queued is written first, as far as the socket takes it without blocking: above all an
     * acknowledgement held for {@link NetTransportConfig#ackCoalescingNs()}. A host that closes
     * right after it received a request (a peer's "done" message) would otherwise close the stream
     * with that request unacknowledged, and the peer's requester, seeing the stream end, would
     * fail it with RETRY_EXC_ERR although it arrived.
     */
    void close() {
        if (!broken && connected && !writeBlocked && (!queue.isEmpty() || large != null || retiredLarge || stageEnd != stageSent)) {
            flush();
        }
        broken = true;
        releaseAll();
        NetAttachment.closeQuietly(channel);
        InboundStream r = reader;
        if (r != null) {
            r.close();
        }
    }

    @Override
    public String toString() {
        return "RC stream to " + destination + (retired ? " (retired)" : "") + (broken ? " (broken: " + brokenReason + ")" : "");
    }
}
