package io.rdmaflux.core;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.bytes.PointerBytesStore;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Chronicle Bytes views of message memory, for {@link RdmaMessage#bytes()} and
 * {@link RdmaMessage#write(int, RdmaMessage.BytesWriter)}. Off-heap memory (receive buffers, send slots,
 * registered regions, direct buffers) is wrapped by address with {@link BytesStore#wrap(long, long)} (a
 * {@link PointerBytesStore}: no copy, no ownership, nothing to free); heap memory with
 * {@link Bytes#wrapForRead(byte[])} / {@link Bytes#wrapForWrite(byte[])} limited to the message's range.
 * Either way the view's limits are set to the message's range, and Chronicle checks every access against
 * them. Both libraries use the native byte order (little-endian on x86 and ARM), so the two views agree.
 *
 * <p>Kept apart from {@link RdmaMessage} so that Chronicle's classes load only when a Chronicle view is
 * asked for: code that uses the Agrona views only never needs Chronicle's JVM flags.
 *
 * <p><b>Concurrency:</b> each view is a new object for the calling thread; Chronicle's single-thread
 * ownership check is turned off on it because a message is read on a thread other than the one that
 * filled it (Reactor hands messages between threads).
 */
final class ChronicleViews {
    private ChronicleViews() {
    }

    /** A view for reading {@code length} bytes of {@code memory} from 0: read position 0, read limit {@code length}. */
    static Bytes<?> forRead(DirectBuffer memory, int length) {
        byte[] array = memory.byteArray();
        Bytes<?> b;
        if (array != null) {
            long from = memory.addressOffset() - BufferUtil.ARRAY_BASE_OFFSET;
            Bytes<byte[]> h = Bytes.wrapForRead(array);
            h.singleThreadedCheckDisabled(true);
            h.readLimit(from + length);
            h.readPosition(from);
            b = h;
        } else {
            PointerBytesStore store = BytesStore.wrap(memory.addressOffset(), length);
            store.singleThreadedCheckDisabled(true);
            b = store.bytesForRead();
            b.singleThreadedCheckDisabled(true);
            b.readLimit(length);
        }
        return b;
    }

    /**
     * Runs {@code writer} over a view for writing {@code length} bytes at {@code offset} of {@code dst}
     * (write position at the first byte, write limit after the last).
     *
     * @throws IllegalStateException if the writer did not write exactly {@code length} bytes
     */
    static void write(MutableDirectBuffer dst, int offset, int length, RdmaMessage.BytesWriter writer) {
        dst.boundsCheck(offset, length);
        byte[] array = dst.byteArray();
        Bytes<?> b;
        long start;
        if (array != null) {
            start = dst.addressOffset() - BufferUtil.ARRAY_BASE_OFFSET + offset;
            Bytes<byte[]> h = Bytes.wrapForWrite(array);
            h.singleThreadedCheckDisabled(true);
            h.writeLimit(start + length);
            h.writePosition(start);
            b = h;
        } else {
            start = 0;
            PointerBytesStore store = BytesStore.wrap(dst.addressOffset() + offset, length);
            store.singleThreadedCheckDisabled(true);
            b = store.bytesForWrite();
            b.singleThreadedCheckDisabled(true);
            // a PointerBytesStore's bytesForWrite() does not stop at the store's capacity (a write past it
            // succeeded, ChronicleContentTest): the limit is set here, or a writer could run over the next
            // message of a packed frame
            b.writeLimit(length);
        }
        writer.write(b);
        long written = b.writePosition() - start;
        if (written != length) {
            throw new IllegalStateException("the BytesWriter wrote " + written + " bytes of a " + length
                + "-byte message; write exactly the lengthBytes given to RdmaMessage.write");
        }
    }
}
