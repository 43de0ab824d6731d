package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes {@link FrameType#RTS} frames, the "start rendezvous" of seed 001 &sect;3 (Fig. 2): the sender
 * asks to RDMA WRITE one large message into a registered buffer of the receiver. An RTS consumes one
 * buffer credit and one message credit, like the first fragment of a DATA message.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (4)    |           flags (0)           |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |                     PSN of the message                        |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                     payload length (0)                        | 16
 * +---------------------------------------------------------------+
 * |               message length in bytes (u32, LE)               | 20
 * +---------------------------------------------------------------+
 * </pre>
 *
 * <p>The frame is the {@link FrameHeader} alone: the PSN and the message length travel in its fields.
 */
public final class RtsFrameCodec {
    /** An RTS frame is exactly a header, in bytes. */
    public static final int LENGTH = FrameHeader.LENGTH;
    /** Offset of the message length: the header's message length field. */
    public static final int MESSAGE_LENGTH_OFFSET = FrameHeader.MESSAGE_LENGTH_OFFSET;

    private RtsFrameCodec() {
    }

    /**
     * @param psn           the PSN of the message
     * @param credits       the credit word the frame piggybacks
     * @param messageLength the whole message in bytes, &gt;= 0
     * @return the frame length in bytes
     * @throws IllegalArgumentException if {@code messageLength} is negative
     */
    public static int encode(MutableDirectBuffer b, int offset, int psn, int credits, int messageLength) {
        FrameHeader.requireMessageLength(messageLength);
        FrameHeader.write(b, offset, FrameType.RTS, 0, 0, psn, credits, 0, messageLength);
        return LENGTH;
    }

    /** The length in bytes of the message the RTS announces. */
    public static int messageLength(DirectBuffer b, int offset) {
        return b.getInt(offset + MESSAGE_LENGTH_OFFSET, FrameHeader.ORDER);
    }

    /**
     * Checks that a received RTS frame carries no payload.
     *
     * @throws FrameFormatException naming the payload length found
     */
    public static void validatePayload(DirectBuffer b, int offset) {
        FrameHeader.requirePayload(b, offset, FrameType.RTS, LENGTH - FrameHeader.LENGTH);
    }
}
