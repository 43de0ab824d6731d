package io.rdmaflux.rsocket;

import io.netty.buffer.ByteBuf;
import io.rdmaflux.core.RdmaMessage;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

import java.nio.ByteBuffer;

/**
 * One outbound RSocket frame as an {@link RdmaMessage}, without a copy of its own: the connection copies
 * the frame's readable bytes straight from the {@link ByteBuf} (one or more components, direct or heap)
 * into the registered send buffer, or into the rendezvous staging buffer for a large frame. This message
 * owns the one reference of the frame that {@code DuplexConnection.sendFrame} handed over and releases it
 * exactly once, when the message's own count reaches 0 (the connection releases it once the frame was
 * delivered, copied into a packed frame, or discarded on cancel, error or close).
 *
 * <p>Its bytes may be written more than once (again after a rail failed): the frame is not consumed, its
 * reader index never moves.
 */
final class FrameMessage extends RdmaMessage {
    private final ByteBuf frame;
    private final int length;
    private @Nullable UnsafeBuffer view;

    FrameMessage(ByteBuf frame) {
        this.frame = frame;
        this.length = frame.readableBytes();
    }

    @Override
    public int lengthBytes() {
        return length;
    }

    @Override
    public void writeTo(MutableDirectBuffer dst, int dstOffset) {
        ensureAccessible();
        copyBytes(0, dst, dstOffset, length);
    }

    @Override
    protected void copyBytes(int srcOffset, MutableDirectBuffer dst, int dstOffset, int len) {
        ByteBuf f = frame;
        int from = f.readerIndex() + srcOffset;
        if (f.hasMemoryAddress()) {
            dst.putBytes(dstOffset, wrap(f), srcOffset, len);
            return;
        }
        if (f.hasArray()) {
            dst.putBytes(dstOffset, f.array(), f.arrayOffset() + from, len);
            return;
        }
        // a composite frame (RSocket's header + metadata + data): one copy per component
        int at = dstOffset;
        for (ByteBuffer b : f.nioBuffers(from, len)) {
            int n = b.remaining();
            dst.putBytes(at, b, b.position(), n);
            at += n;
        }
    }

    @Override
    protected DirectBuffer view() {
        UnsafeBuffer v = view;
        if (v == null) {
            if (frame.hasMemoryAddress()) {
                v = wrap(frame);
            } else {
                v = new UnsafeBuffer(new byte[length]);
                copyBytes(0, v, 0, length);
            }
            view = v;
        }
        return v;
    }

    private UnsafeBuffer wrap(ByteBuf f) {
        UnsafeBuffer v = view;
        return v != null ? v : (view = new UnsafeBuffer(f.memoryAddress() + f.readerIndex(), length));
    }

    @Override
    protected void deallocate() {
        view = null;
        frame.release();
    }

    @Override
    public String toString() {
        return "FrameMessage{" + length + " bytes}";
    }
}
