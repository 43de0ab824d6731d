package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFrame;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import org.jspecify.annotations.Nullable;

/**
 * The receive half of one RC connection (accepted, or opened by a local {@link RcStream}, its
 * {@link #writer}): reads frames into its buffer and hands each to the NIC, in order. A
 * frame due now is handed over by reference into the buffer (the NIC places it before returning);
 * one the NIC must hold (a rail with latency) is copied first. The buffer grows to the largest
 * frame seen (up to {@link NetTransportConfig#maxFrameBytes()}). A malformed header closes the
 * stream (its framing is lost) and is counted. A route release frame from the peer ends the stream
 * without breaking its writer's route ({@link #peerReleased}); after a local release the stream only
 * discards what arrives until the peer closes ({@link #drain}). A route renew frame from the peer (it
 * replaced a stalled connection of the pair with this one) is passed to {@link NetAttachment#routeRenewed}.
 * Engine thread only.
 */
final class InboundStream {
    private static final int INITIAL_BYTES = 64 << 10;
    private static final int LARGE_FRAME_BYTES = 64 << 10;

    private final NetTransport transport;
    private final SoftDevice nic;
    private final SocketChannel channel;
    private final NetAttachment owner;
    private ByteBuffer buf = NetFrameCodec.direct(INITIAL_BYTES);
    private int readPos;
    private int writePos;
    private long lastDeliverAtNs = Long.MIN_VALUE;
    private boolean closed;
    boolean backlogged;
    private @Nullable SelectionKey key;
    /** The send half on this connection, once a local route uses it. */
    @Nullable RcStream writer;
    private @Nullable InetAddress remoteIp;
    /** The peer's IP as text, stamped on each frame for the NIC's peer check; null if the socket cannot say. */
    private @Nullable String remoteHost;
    private boolean remoteHostKnown;
    private boolean sawFrame;
    private int firstSourceQpn;
    private int firstDestinationQpn;
    /**
     * Test seam: the connection carries nothing from this end (its writer writes nothing), as a TCP
     * connection in retransmission backoff behind a link that went down. Set at both ends, it models the
     * stalled stream that {@link NetAttachment#routeStalled} replaces.
     */
    boolean stalledForTest;
    /** {@link #lastReadNs} of a stream that has read nothing yet. */
    static final long NEVER_READ = Long.MIN_VALUE;
    /** NIC time of the last read that returned bytes; {@link #NEVER_READ} before the first. */
    long lastReadNs = NEVER_READ;
    /** The local QP of this connection's pair was destroyed: what arrives is discarded until EOF. */
    private boolean draining;
    /** When a draining stream is closed regardless (set by {@link NetAttachment} on its first pass after). */
    long lingerUntilNs;
    boolean lingerDeadlineSet;

    InboundStream(NetTransport transport, SoftDevice nic, SocketChannel channel, NetAttachment owner) {
        this.transport = transport;
        this.nic = nic;
        this.channel = channel;
        this.owner = owner;
        transport.openStreams.incrementAndGet();
    }

    SocketChannel channel() {
        return channel;
    }

    @Nullable SelectionKey key() {
        return key;
    }

    void key(SelectionKey key) {
        this.key = key;
    }

    /**
     * Whether this accepted connection carries the peer's half of the QP pair
     * {@code (remoteQpn -> localQpn)} from {@code remote}, with no local send half yet.
     */
    boolean carries(InetAddress remote, int remoteQpn, int localQpn) {
        if (closed || draining || writer != null || !sawFrame || firstSourceQpn != remoteQpn || firstDestinationQpn != localQpn) {
            return false;
        }
        return remote.equals(remoteAddress());
    }

    /** The peer's IP; null if the socket cannot say. */
    @Nullable InetAddress remoteAddress() {
        if (remoteIp == null) {
            try {
                remoteIp = ((InetSocketAddress) channel.getRemoteAddress()).getAddress();
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }
        return remoteIp;
    }

    /** Reads what arrived and delivers complete frames, at most {@code limit}; returns frames delivered. */
    int onReadable(long nowNs, int limit) {
        if (draining) {
            discardArrived();
            return 0;
        }
        int delivered = deliver(nowNs, limit);
        while (!closed && !backlogged && delivered < limit) {
            if (writePos == buf.capacity()) {
                makeRoom(writePos - readPos + 1);
            }
            int n;
            int space;
            try {
                buf.limit(readLimit()).position(writePos);
                space = buf.remaining();
                n = channel.read(buf);
            } catch (IOException e) {
                close();
                return delivered;
            }
            if (n < 0) {
                close();
                return delivered;
            }
            if (n == 0) {
                return delivered;
            }
            writePos += n;
            lastReadNs = nowNs;
            delivered += deliver(nowNs, limit - delivered);
            if (n < space) {
                // the socket had less than we asked for, so it is drained: save the read that would
                // only say so (the selector reports the stream again when more arrives)
                return delivered;
            }
        }
        return delivered;
    }

    /**
     * Where the next read stops: the end of a pending large frame (so the frame after it starts at
     * the front of the buffer again and a large frame is never moved), else the buffer's end.
     */
    private int readLimit() {
        if (writePos - readPos >= NetFrameCodec.HEADER_BYTES) {
            int frameLength = NetFrameCodec.frameLength(buf, readPos);
            if (frameLength > LARGE_FRAME_BYTES && frameLength > writePos - readPos && readPos + frameLength <= buf.capacity()) {
                return readPos + frameLength;
            }
        }
        return buf.capacity();
    }

    /** Delivers complete frames in the buffer, at most {@code limit}. */
    int deliver(long nowNs, int limit) {
        if (draining) {
            readPos = 0;
            writePos = 0;
            return 0;
        }
        int n = 0;
        while (!closed && writePos - readPos >= NetFrameCodec.HEADER_BYTES) {
            if (n >= limit) {
                backlogged = true;
                return n;
            }
            if (NetFrameCodec.isRouteRelease(buf, readPos)) {
                peerReleased();
                return n;
            }
            if (NetFrameCodec.isRouteRenew(buf, readPos)) {
                int source = NetFrameCodec.sourceQpn(buf, readPos);
                int destination = NetFrameCodec.destinationQpn(buf, readPos);
                readPos += NetFrameCodec.HEADER_BYTES;
                if (readPos == writePos) {
                    readPos = 0;
                    writePos = 0;
                }
                if (!sawFrame) {
                    sawFrame = true;
                    firstSourceQpn = source;
                    firstDestinationQpn = destination;
                }
                owner.routeRenewed(this, source, destination);
                continue;
            }
            if (NetFrameCodec.validate(buf, readPos, transport.config.maxFrameBytes()) != NetFrameCodec.Verdict.OK) {
                transport.framesRejected.incrementAndGet();
                close();
                return n;
            }
            int frameLength = NetFrameCodec.frameLength(buf, readPos);
            if (writePos - readPos < frameLength) {
                makeRoom(frameLength);
                return n;
            }
            handOver(readPos, frameLength, nowNs);
            n++;
            readPos += frameLength;
            if (readPos == writePos) {
                readPos = 0;
                writePos = 0;
            }
        }
        return n;
    }

    private void handOver(int at, int frameLength, long nowNs) {
        SoftFrame f = nic.claimFrame();
        long delay = NetFrameCodec.decodeHeader(buf, at, f);
        f.sourceHost = remoteHost();
        if (!sawFrame) {
            sawFrame = true;
            firstSourceQpn = f.sourceQpn;
            firstDestinationQpn = f.destinationQpn;
        }
        long deliverAt = nowNs + delay;
        if (deliverAt - lastDeliverAtNs < 0 && lastDeliverAtNs != Long.MIN_VALUE) {
            deliverAt = lastDeliverAtNs;
        }
        lastDeliverAtNs = deliverAt;
        f.deliverAtNs = deliverAt;
        int payload = frameLength - NetFrameCodec.HEADER_BYTES;
        if (payload > 0) {
            if (deliverAt - nowNs > 0) {
                ByteBuffer copy = payload <= SoftFrame.MAX_OWN_PAYLOAD ? f.ownPayload(payload) : ByteBuffer.allocateDirect(payload);
                copy.put(0, buf, at + NetFrameCodec.HEADER_BYTES, payload);
                f.addPayload(copy, 0, payload);
            } else {
                f.addPayload(buf, at + NetFrameCodec.HEADER_BYTES, payload);
            }
        }
        if (nic.onFrameArrived(f, nowNs)) {
            f.release();
        }
    }

    private @Nullable String remoteHost() {
        if (!remoteHostKnown) {
            remoteHostKnown = true;
            try {
                remoteHost = ((InetSocketAddress) channel.getRemoteAddress()).getAddress().getHostAddress();
            } catch (IOException | RuntimeException e) {
                remoteHost = null;
            }
        }
        return remoteHost;
    }

    /** Makes room for a frame of {@code frameLength} bytes starting at {@code readPos}; false if closed. */
    private boolean makeRoom(int frameLength) {
        if (buf.capacity() - readPos >= frameLength) {
            return true;
        }
        int pending = writePos - readPos;
        if (frameLength <= buf.capacity()) {
            buf.limit(writePos).position(readPos);
            buf.compact();
        } else {
            int cap = Integer.highestOneBit(frameLength - 1) << 1;
            if (cap <= 0 || cap > transport.config.maxFrameBytes()) {
                cap = transport.config.maxFrameBytes();
            }
            ByteBuffer bigger = NetFrameCodec.direct(cap);
            bigger.put(0, buf, readPos, pending);
            buf = bigger;
        }
        readPos = 0;
        writePos = pending;
        return true;
    }

    /**
     * The local QP of this connection's pair was destroyed and its writer released the route: from now
     * on what arrives is read and discarded (never handed to the NIC, where a new QP may have taken the
     * QPN), and the connection closes when the peer closes its side, or at the linger bound.
     */
    void drain() {
        if (closed || draining) {
            return;
        }
        draining = true;
        readPos = 0;
        writePos = 0;
        owner.lingering(this);
    }

    boolean isDraining() {
        return draining;
    }

    /** Reads and drops what arrived (a few reads at most per pass); closes on EOF or error. */
    private void discardArrived() {
        for (int i = 0; i < 4 && !closed; i++) {
            buf.clear();
            int n;
            try {
                n = channel.read(buf);
            } catch (IOException e) {
                close();
                return;
            }
            if (n < 0) {
                close();
                return;
            }
            if (n < buf.capacity()) {
                return;
            }
        }
    }

    /**
     * The peer sent a route release (its QP of this pair was destroyed): close without reporting the
     * route broken. The peer has half-closed and sends nothing more, so closing here ends the
     * connection cleanly (FIN, no reset), and the peer, which discards until EOF, closes its side.
     */
    private void peerReleased() {
        transport.streamsReleasedByPeer.incrementAndGet();
        RcStream w = writer;
        if (w != null) {
            w.peerReleased();
        }
        close();
    }

    void close() {
        if (closed) {
            return;
        }
        closed = true;
        transport.openStreams.decrementAndGet();
        owner.forget(this);
        NetAttachment.closeQuietly(channel);
        RcStream w = writer;
        if (w != null) {
            w.breakStream("the peer closed the stream (or it was reset)");
        }
    }
}
