package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#DATA} frames: the {@link FrameHeader} followed by
 * {@code payloadLength} bytes of one fragment of a message of {@code messageLength} bytes. The first
 * fragment has {@link FrameHeader#FLAG_FIRST}, the last {@link FrameHeader#FLAG_LAST}; a message
 * that fits one frame has both. Fragments of one message travel in order on one subchannel.
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
