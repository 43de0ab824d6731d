package io.rdmaflux.core;

import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.UnsafeApi;
import org.jspecify.annotations.Nullable;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A message: a reference-counted view of bytes, usually an off-heap registered buffer.
 *
 * <p><b>Reference count:</b> a message starts with a count of 1. {@link #retain()} adds one,
 * {@link #release()} removes one and returns {@code true} when the count reached 0; at that point a
 * received message's receive buffer goes back to its pool and, once the buffer is free and covered
 * by demand again, a credit goes back to the sender (seed 001 &sect;4.4: buffers may be released out
 * of order). Releasing a message whose count is already 0 throws
 * {@link IllegalReferenceCountException} naming the message; so does reading it. Received messages
 * are pooled like Netty's pooled buffers: a reference kept after the final release may later see
 * another message, so never use a message after releasing it. {@link #close()} is
 * {@link #release()}, so Kotlin's {@code use {}} and try-with-resources work.
 *
 * <p><b>Sending:</b> passing a message to {@code RdmaConnection.send} hands over one reference; the
 * connection releases it once the message's delivery completed (it keeps it until then so that it can
 * send it again over another rail if its rail fails), except a small message that travels in a packed
 * frame with others: that one is released as soon as it is copied into the frame, which then holds its
 * bytes for a re-send. Either way the send's {@code Mono} completes only after delivery. Factories: {@link #of(byte[])},
 * {@link #of(ByteBuffer)}, {@link #of(String)}, {@link #of(io.rdmaflux.verbs.MemoryRegion, long, int)}
 * for memory registered with the node (large messages are RDMA-written from it with no copy), and
 * {@link #write(int, Writer)} which fills the registered send buffer in place when the message fits
 * one frame, or a rendezvous staging buffer when it is large (no extra copy).
 *
 * <p><b>Concurrency:</b> {@code retain}/{@code release} may be called from any thread; the bytes are
 * immutable while the count is positive. A count above 1 changes by an atomic compare-and-set. The
 * final release (count 1 to 0) is a release store, not an atomic read-modify-write: whoever holds the
 * only reference is the only one allowed to touch the count (a retain needs a reference, a second
 * release of it is a double release), so the store cannot lose an update in a correct program. What
 * it gives up is catching two threads that release the same last reference at the very same time; a
 * release after the final one is caught whatever the timing.
 */
public abstract class RdmaMessage implements AutoCloseable {
    private static final VarHandle REF_CNT;

    static {
        try {
            REF_CNT = MethodHandles.lookup().findVarHandle(RdmaMessage.class, "refCnt", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Fills {@code lengthBytes} bytes at {@code offset} of {@code buffer}; runs on the progress thread,
     * must not block. It may run more than once for one message (again when its rail failed and the
     * message is re-sent), so it must write the same bytes each time.
     */
    @FunctionalInterface
    public interface Writer {
        void write(MutableDirectBuffer buffer, int offset, int lengthBytes);
    }

    /**
     * Fills a message's bytes through a Chronicle {@link net.openhft.chronicle.bytes.Bytes} view: write
     * position at the message's first byte, write limit after its last; it must write exactly the message's
     * length. Runs where {@link Writer} runs (the progress thread, possibly more than once), under the same
     * rules: must not block, must write the same bytes each time.
     */
    @FunctionalInterface
    public interface BytesWriter {
        void write(net.openhft.chronicle.bytes.Bytes<?> bytes);
    }

    private volatile int refCnt;

    protected RdmaMessage() {
        // a plain store, as Netty's reference-counted buffers set their initial count: a volatile one would
        // be a full fence per message created (some 15% of the 32 B path); the message reaches another
        // thread only through a hand-over that orders this store (a Reactive Streams signal, a queue)
        REF_CNT.set(this, 1);
    }

    /** For pooled messages created empty: {@code initialRefCnt} 0 means not yet holding a message. */
    protected RdmaMessage(int initialRefCnt) {
        REF_CNT.set(this, initialRefCnt);
    }

    /** Wraps {@code bytes} (not copied: do not modify them until the message is released). */
    public static RdmaMessage of(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        return new ArrayMessage(bytes);
    }

    /**
     * Wraps the remaining bytes of {@code buffer} (not copied; position and limit are not changed). A
     * direct buffer's message above the node's rendezvous threshold is sent by reference, with no
     * staging copy: its memory is registered through the node's registration cache (see
     * {@link RdmaNode.Builder#registrationCacheBytes}), so do not change the bytes until the send's
     * {@code Mono} completed. A heap buffer's large message is copied into a registered staging buffer.
     */
    public static RdmaMessage of(ByteBuffer buffer) {
        Objects.requireNonNull(buffer, "buffer");
        if (buffer.isDirect()) {
            return new DirectBufferMessage(buffer);
        }
        return new HeapMessage(new UnsafeBuffer(buffer, buffer.position(), buffer.remaining()), buffer.remaining());
    }

    /**
     * A message of {@code lengthBytes} bytes at {@code offset} of memory registered with the sending node
     * ({@link RdmaNode#registerMemory}). A large message (above the node's rendezvous threshold) is
     * RDMA-written straight from this memory to the receiver's message buffer: the only copy is the
     * NIC's. Do not change the bytes until the send's {@code Mono} completed; the message's release does
     * not deregister the region.
     *
     * @throws IllegalArgumentException if the range is outside the region or the region is deregistered
     */
    public static RdmaMessage of(io.rdmaflux.verbs.MemoryRegion region, long offset, int lengthBytes) {
        Objects.requireNonNull(region, "region");
        if (!region.isValid()) {
            throw new IllegalArgumentException("region rkey=" + region.rkey() + " is deregistered; register the memory again");
        }
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > region.length()) {
            throw new IllegalArgumentException("range [" + offset + ", " + (offset + lengthBytes) + ") is outside the "
                + region.length() + "-byte region");
        }
        return new RegisteredMessage(region, offset, lengthBytes);
    }

    /** The UTF-8 bytes of {@code text}. */
    public static RdmaMessage of(String text) {
        return of(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A message of {@code lengthBytes} bytes produced by {@code writer} when it is sent. When the
     * message fits one frame the writer fills the registered send buffer directly; a larger message
     * is written once to a scratch buffer and then fragmented.
     *
     * @throws IllegalArgumentException if {@code lengthBytes < 0}
     */
    public static RdmaMessage write(int lengthBytes, Writer writer) {
        if (lengthBytes < 0) {
            throw new IllegalArgumentException("lengthBytes >= 0 required but it was " + lengthBytes);
        }
        return new WriterMessage(lengthBytes, Objects.requireNonNull(writer, "writer"));
    }

    /**
     * A message of {@code lengthBytes} bytes that {@code writer} fills through a Chronicle {@code Bytes}
     * view of the send slot when it is sent, as {@link #write(int, Writer)} does through an Agrona view:
     * no copy when the message fits one frame. Chronicle marshalling works on it, e.g.
     * {@code RdmaMessage.write(24, b -> record.writeMarshallable(b))} for a {@code BytesMarshallable}.
     * A writer that writes more than {@code lengthBytes} gets Chronicle's {@code BufferOverflowException};
     * one that writes fewer, an {@link IllegalStateException} naming both counts. Either fails the send
     * as any throwing writer does.
     *
     * @throws IllegalArgumentException if {@code lengthBytes < 0}
     */
    public static RdmaMessage write(int lengthBytes, BytesWriter writer) {
        Objects.requireNonNull(writer, "writer");
        return write(lengthBytes, (buffer, offset, length) -> ChronicleViews.write(buffer, offset, length, writer));
    }

    /**
     * The bytes as a Chronicle {@code Bytes} view for reading: read position 0, read limit
     * {@link #lengthBytes()}, over the same memory as {@link #content()} (no copy; a receive buffer or
     * registered region is wrapped by address). Valid until the message is released; do not write to it.
     * A new view object per call: a per-message convenience, see the README for its cost against
     * {@link #content()}.
     *
     * @throws IllegalReferenceCountException if the message was released
     */
    public net.openhft.chronicle.bytes.Bytes<?> bytes() {
        ensureAccessible();
        return ChronicleViews.forRead(view(), lengthBytes());
    }

    /** The message length in bytes. */
    public abstract int lengthBytes();

    /** The PSN the message travelled with (received messages), or -1 for messages not yet sent. */
    public int psn() {
        return -1;
    }

    /**
     * Copies {@code length} bytes starting at {@code srcOffset} of this message to {@code dst}.
     *
     * @throws IllegalReferenceCountException if the message was released
     * @throws IndexOutOfBoundsException if the range is outside the message
     */
    public void copyTo(int srcOffset, MutableDirectBuffer dst, int dstOffset, int length) {
        ensureAccessible();
        if (srcOffset < 0 || length < 0 || srcOffset + length > lengthBytes()) {
            throw new IndexOutOfBoundsException("range [" + srcOffset + ", " + (srcOffset + length) + ") is outside the "
                + lengthBytes() + "-byte " + this);
        }
        copyBytes(srcOffset, dst, dstOffset, length);
    }

    /**
     * Copies a valid range out of {@link #view()}; a subclass that can copy without materializing a
     * view (a {@code byte[]} message) overrides it.
     */
    protected void copyBytes(int srcOffset, MutableDirectBuffer dst, int dstOffset, int length) {
        dst.putBytes(dstOffset, view(), srcOffset, length);
    }

    /**
     * A read-only view of the bytes, valid until the message is released.
     *
     * @throws IllegalReferenceCountException if the message was released
     */
    public DirectBuffer content() {
        ensureAccessible();
        return view();
    }

    /** The view behind {@link #content()}; a writer message materializes itself once. */
    protected abstract DirectBuffer view();

    /** A copy of the bytes. */
    public byte[] toByteArray() {
        byte[] out = new byte[lengthBytes()];
        copyTo(0, new UnsafeBuffer(out), 0, out.length);
        return out;
    }

    /** The bytes decoded as UTF-8. */
    public String asString() {
        return new String(toByteArray(), StandardCharsets.UTF_8);
    }

    public final int refCnt() {
        return refCnt;
    }

    /**
     * Adds one reference.
     *
     * @throws IllegalReferenceCountException if the count was already 0
     */
    public final RdmaMessage retain() {
        for (;;) {
            int c = refCnt;
            if (c <= 0) {
                throw new IllegalReferenceCountException("retain() on " + this + " whose reference count is 0: it was already released");
            }
            if (REF_CNT.compareAndSet(this, c, c + 1)) {
                return this;
            }
        }
    }

    /**
     * Removes one reference; at 0 the buffer goes back to its pool.
     *
     * @return whether this call brought the count to 0
     * @throws IllegalReferenceCountException naming the message if the count was already 0
     */
    public final boolean release() {
        int c = refCnt;
        if (c == 1) {
            // the caller holds the only reference: no other thread may change the count now (see the class
            // Javadoc), so a release store ends it without the cost of an atomic instruction per message
            REF_CNT.setRelease(this, 0);
            deallocate();
            return true;
        }
        for (;;) {
            if (c <= 0) {
                throw new IllegalReferenceCountException("release() on " + this
                    + " whose reference count is already 0: the message was released twice; release each message exactly once");
            }
            if (REF_CNT.compareAndSet(this, c, c - 1)) {
                if (c == 1) {
                    deallocate();
                    return true;
                }
                return false;
            }
            c = refCnt;
        }
    }

    /** Same as {@link #release()}. */
    @Override
    public final void close() {
        release();
    }

    /** Called once when the count reaches 0. */
    protected abstract void deallocate();

    /** Resets the count to 1 when a pooled message object is reused for a new message. */
    protected final void resetRefCnt() {
        // a release store: whoever gets the message next gets it through a hand-over that orders it
        REF_CNT.setRelease(this, 1);
    }

    /** Writes the whole message into {@code dst} in place when possible (writer messages); else copies. */
    public void writeTo(MutableDirectBuffer dst, int dstOffset) {
        copyTo(0, dst, dstOffset, lengthBytes());
    }

    protected final void ensureAccessible() {
        if (refCnt <= 0) {
            throw new IllegalReferenceCountException("access to " + this + " after its final release (reference count 0)");
        }
    }

    @Override
    public String toString() {
        return "RdmaMessage{" + lengthBytes() + " bytes}";
    }

    private static final class HeapMessage extends RdmaMessage {
        private final UnsafeBuffer bytes;
        private final int length;

        HeapMessage(UnsafeBuffer bytes, int length) {
            this.bytes = bytes;
            this.length = length;
        }

        @Override
        public int lengthBytes() {
            return length;
        }


        @Override
        protected DirectBuffer view() {
            return bytes;
        }

        @Override
        protected void deallocate() {
            // heap memory: the GC reclaims it
        }
    }

    /** A {@code byte[]}: copied straight from the array, no buffer object per message (the 32 B path). */
    private static final class ArrayMessage extends RdmaMessage {
        /** Up to this many bytes, {@link #writeTo} copies word by word. */
        private static final int SMALL_COPY_BYTES = 128;
        private final byte[] bytes;
        private @Nullable UnsafeBuffer view;

        ArrayMessage(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public int lengthBytes() {
            return bytes.length;
        }

        @Override
        public void writeTo(MutableDirectBuffer dst, int dstOffset) {
            ensureAccessible();
            byte[] b = bytes;
            int len = b.length;
            if (len > SMALL_COPY_BYTES) {
                dst.putBytes(dstOffset, b, 0, len);
                return;
            }
            // small messages (the message-rate path): word stores beat the bulk copy's call; one bounds check
            // for the whole range, then stores by address (Agrona's addressing: array + offset, or null + address)
            dst.boundsCheck(dstOffset, len);
            byte[] dstArray = dst.byteArray();
            long at = dst.addressOffset() + dstOffset;
            int i = 0;
            for (; i + Long.BYTES <= len; i += Long.BYTES) {
                UnsafeApi.putLong(dstArray, at + i, UnsafeApi.getLong(b, BufferUtil.ARRAY_BASE_OFFSET + i));
            }
            for (; i < len; i++) {
                UnsafeApi.putByte(dstArray, at + i, b[i]);
            }
        }

        @Override
        protected void copyBytes(int srcOffset, MutableDirectBuffer dst, int dstOffset, int len) {
            dst.putBytes(dstOffset, bytes, srcOffset, len);
        }

        @Override
        protected DirectBuffer view() {
            UnsafeBuffer v = view;
            if (v == null) {
                v = new UnsafeBuffer(bytes);
                view = v;
            }
            return v;
        }

        @Override
        protected void deallocate() {
            // heap memory: the GC reclaims it
        }
    }

    private static final class WriterMessage extends RdmaMessage {
        private final int length;
        private final Writer writer;
        private @Nullable UnsafeBuffer materialized;

        WriterMessage(int length, Writer writer) {
            this.length = length;
            this.writer = writer;
        }

        @Override
        public int lengthBytes() {
            return length;
        }

        @Override
        public void writeTo(MutableDirectBuffer dst, int dstOffset) {
            ensureAccessible();
            if (materialized != null) {
                dst.putBytes(dstOffset, materialized, 0, length);
            } else {
                writer.write(dst, dstOffset, length);
            }
        }


        @Override
        protected DirectBuffer view() {
            if (materialized == null) {
                UnsafeBuffer b = new UnsafeBuffer(new byte[length]);
                writer.write(b, 0, length);
                materialized = b;
            }
            return materialized;
        }

        @Override
        protected void deallocate() {
            materialized = null;
        }
    }
}
