package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFrame;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * An accepted TCP stream: reads frames into its buffer and hands each to the NIC, in order. A
 * frame due now is handed over by reference into the buffer (the NIC places it before returning);
 * one the NIC must hold (a rail with latency) is copied first. The buffer grows to the largest
 * frame seen (up to {@link NetTransportConfig#maxFrameBytes()}). A malformed header closes the
 * stream (its framing is lost) and is counted. Engine thread only.
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

    InboundStream(NetTransport transport, SoftDevice nic, SocketChannel channel, NetAttachment owner) {
        this.transport = transport;
        this.nic = nic;
        this.channel = channel;
        this.owner = owner;
    }

    /** Reads what arrived and delivers complete frames, at most {@code limit}; returns frames delivered. */
    int onReadable(long nowNs, int limit) {
        int delivered = deliver(nowNs, limit);
        while (!closed && !backlogged && delivered < limit) {
            if (writePos == buf.capacity()) {
                makeRoom(writePos - readPos + 1);
            }
            int n;
            try {
                buf.limit(readLimit()).position(writePos);
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
            delivered += deliver(nowNs, limit - delivered);
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
        int n = 0;
        while (!closed && writePos - readPos >= NetFrameCodec.HEADER_BYTES) {
            if (n >= limit) {
                backlogged = true;
                return n;
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

    void close() {
        if (closed) {
            return;
        }
        closed = true;
        owner.forget(this);
        NetAttachment.closeQuietly(channel);
    }
}
