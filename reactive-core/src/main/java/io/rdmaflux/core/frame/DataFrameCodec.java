package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.UnsafeApi;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#DATA} frames: the {@link FrameHeader} followed by
 * {@code payloadLength} bytes of one fragment of a message of {@code messageLength} bytes. The first
 * fragment has {@link FrameHeader#FLAG_FIRST}, the last {@link FrameHeader#FLAG_LAST}; a message
 * that fits one frame has both. Fragments of one message travel in order on one subchannel.
 *
 * <p><b>Packed DATA</b> ({@link FrameHeader#FLAG_PACKED}, with FIRST and LAST): several small whole
 * messages with consecutive PSNs from the header's PSN, so one work request and one receive buffer carry
 * them all (coalescing, seed 001 &sect;4.3: fewer verbs operations per message). The message length
 * field holds the count; the payload is, per message:
 * <pre>
 * +---------------------------------------------------------------+
 * |                  message length (bytes, u32)                  |
 * +---------------------------------------------------------------+
 * |                  message bytes ...                            |
 * </pre>
 * A packed frame takes one buffer credit and one message credit per message.
 */
public final class DataFrameCodec {
    private DataFrameCodec() {
    }

    /**
     * Writes the header of a DATA frame whose payload the caller places (or already placed) at
     * {@code offset + FrameHeader.LENGTH}.
     *
     * @return the frame length in bytes (header + payload)
     * @throws IllegalArgumentException if a length is negative or the payload exceeds the message
     */
    public static int encodeHeader(MutableDirectBuffer b, int offset, boolean first, boolean last, int streamId,
                                   int psn, int credits, int payloadLength, int messageLength) {
        if (payloadLength < 0 || messageLength < 0 || payloadLength > messageLength) {
            throw new IllegalArgumentException("payloadLength in [0, messageLength] required but it was "
                + payloadLength + " for messageLength " + messageLength);
        }
        int flags = (first ? FrameHeader.FLAG_FIRST : 0) | (last ? FrameHeader.FLAG_LAST : 0);
        FrameHeader.write(b, offset, FrameType.DATA, flags, streamId, psn, credits, payloadLength, messageLength);
        return FrameHeader.LENGTH + payloadLength;
    }

    /** Bytes before every message of a packed frame: its length. */
    public static final int PACKED_PREFIX_BYTES = 4;
    /** Most messages one packed frame carries (bounds the receiver's views per buffer). */
    public static final int MAX_PACKED_MESSAGES = 64;

    /**
     * Writes the header of a packed DATA frame of {@code count} messages starting at {@code psn}, whose
     * {@code payloadLength} bytes (prefixes included) the caller placed at {@code offset + FrameHeader.LENGTH}.
     *
     * @return the frame length in bytes (header + payload)
     * @throws IllegalArgumentException if {@code count} is outside [1, {@link #MAX_PACKED_MESSAGES}] or the payload cannot hold {@code count} prefixes
     */
    public static int encodePackedHeader(MutableDirectBuffer b, int offset, int streamId, int psn, int credits,
                                         int payloadLength, int count) {
        if (count < 1 || count > MAX_PACKED_MESSAGES || payloadLength < (long) count * PACKED_PREFIX_BYTES) {
            throw new IllegalArgumentException("count in [1, " + MAX_PACKED_MESSAGES + "] and payloadLength >= count * " + PACKED_PREFIX_BYTES
                + " required but they were " + count + " and " + payloadLength);
        }
        FrameHeader.write(b, offset, FrameType.DATA, FrameHeader.FLAG_FIRST | FrameHeader.FLAG_LAST | FrameHeader.FLAG_PACKED,
            streamId, psn, credits, payloadLength, count);
        return FrameHeader.LENGTH + payloadLength;
    }

    /** Writes one message's length prefix at {@code position} of a packed payload; returns where its bytes go. */
    public static int putPackedLength(MutableDirectBuffer b, int position, int messageLength) {
        b.putInt(position, messageLength, FrameHeader.ORDER);
        return position + PACKED_PREFIX_BYTES;
    }

    /** The length prefix at {@code position} of a packed payload. */
    public static int packedLength(DirectBuffer b, int position) {
        return b.getInt(position, FrameHeader.ORDER);
    }

    private static final boolean NATIVE_IS_WIRE_ORDER = java.nio.ByteOrder.nativeOrder() == FrameHeader.ORDER;

    /**
     * The length prefix at absolute {@code address} of a packed payload in registered memory, read with no
     * bounds check: only for a frame {@link #validatePacked} accepted, at a prefix position it walked.
     */
    public static int packedLengthAt(long address) {
        int v = UnsafeApi.getInt(address);
        return NATIVE_IS_WIRE_ORDER ? v : Integer.reverseBytes(v);
    }

    public static boolean isPacked(DirectBuffer b, int offset) {
        return (FrameHeader.flags(b, offset) & FrameHeader.FLAG_PACKED) != 0;
    }

    /**
     * Checks that the payload of the packed frame at {@code offset} holds exactly its announced count of
     * length-prefixed messages, so the receiver splits it without reading outside it.
     *
     * @throws FrameFormatException naming the count, the message and the lengths at fault
     */
    public static void validatePacked(DirectBuffer b, int offset) {
        int count = FrameHeader.messageLength(b, offset);
        int payload = FrameHeader.payloadLength(b, offset);
        if (count < 1 || count > MAX_PACKED_MESSAGES) {
            throw new FrameFormatException("packed DATA frame (PSN " + FrameHeader.psn(b, offset) + ") announces " + count
                + " messages; 1 to " + MAX_PACKED_MESSAGES + " required");
        }
        int pos = payloadOffset(offset);
        int end = pos + payload;
        if (payload < 0 || (long) end > b.capacity()) {
            throw new FrameFormatException("packed DATA frame (PSN " + FrameHeader.psn(b, offset) + ") announces a " + payload
                + "-byte payload but the buffer holds " + Math.max(0, b.capacity() - pos) + " bytes after the header");
        }
        // one bounds check for the payload, then the prefixes by address (the per-read checks cost more than the walk)
        b.boundsCheck(pos, payload);
        byte[] array = b.byteArray();
        long address = b.addressOffset();
        for (int i = 0; i < count; i++) {
            int len = end - pos >= PACKED_PREFIX_BYTES ? wireInt(array, address + pos) : -1;
            if (len < 0 || len > end - pos - PACKED_PREFIX_BYTES) {
                throw new FrameFormatException("packed DATA frame (PSN " + FrameHeader.psn(b, offset) + "): message " + i
                    + " of " + count + " says " + len + " bytes but " + Math.max(0, end - pos - PACKED_PREFIX_BYTES)
                    + " bytes of the " + payload + "-byte payload remain");
            }
            pos += PACKED_PREFIX_BYTES + len;
        }
        if (pos != end) {
            throw new FrameFormatException("packed DATA frame (PSN " + FrameHeader.psn(b, offset) + "): its " + count
                + " messages end " + (end - pos) + " bytes before the " + payload + "-byte payload does");
        }
    }

    private static int wireInt(byte[] array, long address) {
        int v = UnsafeApi.getInt(array, address);
        return NATIVE_IS_WIRE_ORDER ? v : Integer.reverseBytes(v);
    }

    /** Offset of the payload of the frame at {@code offset}. */
    public static int payloadOffset(int offset) {
        return offset + FrameHeader.LENGTH;
    }

    public static boolean isFirst(DirectBuffer b, int offset) {
        return (FrameHeader.flags(b, offset) & FrameHeader.FLAG_FIRST) != 0;
    }

    public static boolean isLast(DirectBuffer b, int offset) {
        return (FrameHeader.flags(b, offset) & FrameHeader.FLAG_LAST) != 0;
    }
}
