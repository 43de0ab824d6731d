package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#FIN} frames, the "finish rendezvous" of seed 001 &sect;3
 * (Fig. 2): the RDMA WRITE of one stripe of the message the PSN names is complete. One FIN per
 * subchannel that carried a stripe (seed 000 &sect;5.3), sent on the QP of the WRITE, which RC
 * delivers after the WRITE's data. A control frame: it consumes no credit.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (6)    |           flags (0)           |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |                     PSN of the message                        |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                     payload length (16)                       | 16
 * +---------------------------------------------------------------+
 * |                   message length in bytes                     | 20
 * +---------------------------------------------------------------+
 * |            stripe offset in the message, bytes                | 24
 * +---------------------------------------------------------------+
 * |                   stripe length in bytes                      | 28
 * +---------------------------------------------------------------+
 * |            stripes of the message (= FINs to expect)          | 32
 * +---------------------------------------------------------------+
 * |                stripe index in [0, stripes)                   | 36
 * +---------------------------------------------------------------+
 * </pre>
 *
 * <p>The stripe index lets the receiver count each stripe once when a stripe is re-sent after its
 * rail failed.
 */
public final class FinFrameCodec {
    /** Length of a FIN frame in bytes. */
    public static final int LENGTH = FrameHeader.LENGTH + 16;
    /** Offset of the stripe's offset in the message (u32). */
    public static final int STRIPE_OFFSET_OFFSET = FrameHeader.LENGTH;
    /** Offset of the stripe's length in bytes (u32). */
    public static final int STRIPE_LENGTH_OFFSET = FrameHeader.LENGTH + 4;
    /** Offset of the number of stripes of the message (u32). */
    public static final int STRIPES_OFFSET = FrameHeader.LENGTH + 8;
    /** Offset of the stripe's index (u32). */
    public static final int STRIPE_INDEX_OFFSET = FrameHeader.LENGTH + 12;
    /** Most stripes of one message: the receiver tracks them in a 64-bit mask. */
    public static final int MAX_STRIPES = 64;

    private FinFrameCodec() {
    }

    /**
     * @param psn           the PSN of the message
     * @param credits       the credit word the frame piggybacks
     * @param messageLength the whole message in bytes, &gt;= 0
     * @param stripeOffset  where the stripe starts in the message, bytes
     * @param stripeLength  the stripe in bytes
     * @param stripes       stripes of the message, &gt;= 1
     * @param stripeIndex   this stripe's index, in [0, {@link #MAX_STRIPES})
     * @return the frame length in bytes
     * @throws IllegalArgumentException if the stripe is outside the message, the stripe count is not
     *     positive or the index is out of range
     */
    public static int encode(MutableDirectBuffer b, int offset, int psn, int credits, int messageLength,
                             int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        FrameHeader.requireMessageLength(messageLength);
        if (stripeOffset < 0 || stripeLength < 0 || (long) stripeOffset + stripeLength > messageLength || stripes < 1
            || stripeIndex < 0 || stripeIndex >= MAX_STRIPES) {
            throw new IllegalArgumentException("FIN stripe " + stripeIndex + " [" + stripeOffset + ", +" + stripeLength + ") of "
                + stripes + " stripes must lie inside the " + messageLength + "-byte message, index in [0, " + MAX_STRIPES + ")");
        }
        FrameHeader.write(b, offset, FrameType.FIN, 0, 0, psn, credits, LENGTH - FrameHeader.LENGTH, messageLength);
        b.putInt(offset + STRIPE_OFFSET_OFFSET, stripeOffset, FrameHeader.ORDER);
        b.putInt(offset + STRIPE_LENGTH_OFFSET, stripeLength, FrameHeader.ORDER);
        b.putInt(offset + STRIPES_OFFSET, stripes, FrameHeader.ORDER);
        b.putInt(offset + STRIPE_INDEX_OFFSET, stripeIndex, FrameHeader.ORDER);
        return LENGTH;
    }

    /**
     * Checks that a received FIN frame has its fixed 16-byte payload and a stripe the receiver can track:
     * a stripe count in [1, {@link #MAX_STRIPES}], an index in [0, {@link #MAX_STRIPES}) (the index is the
     * rail the stripe was planned on, so it may exceed the count), and a stripe inside the message.
     * An index of 64 or more would alias another stripe in the receiver's 64-bit mask, so the message would
     * never complete.
     *
     * @throws FrameFormatException naming the payload length or the stripe field at fault and its value
     */
    public static void validatePayload(DirectBuffer b, int offset) {
        FrameHeader.requirePayload(b, offset, FrameType.FIN, LENGTH - FrameHeader.LENGTH);
        int stripes = stripes(b, offset);
        int index = stripeIndex(b, offset);
        int stripeOffset = stripeOffset(b, offset);
        int stripeLength = stripeLength(b, offset);
        int messageLength = FrameHeader.messageLength(b, offset);
        if (stripes < 1 || stripes > MAX_STRIPES || index < 0 || index >= MAX_STRIPES) {
            throw new FrameFormatException("FIN frame (PSN " + FrameHeader.psn(b, offset) + ") names stripe index " + index + " of "
                + stripes + " stripes; stripes in [1, " + MAX_STRIPES + "] and index in [0, " + MAX_STRIPES + ") required");
        }
        if (stripeOffset < 0 || stripeLength < 0 || (long) stripeOffset + stripeLength > messageLength) {
            throw new FrameFormatException("FIN frame (PSN " + FrameHeader.psn(b, offset) + ") names stripe offset " + stripeOffset
                + " and stripe length " + stripeLength + ", not inside its message length " + messageLength);
        }
    }

    public static int stripeOffset(DirectBuffer b, int offset) {
        return b.getInt(offset + STRIPE_OFFSET_OFFSET, FrameHeader.ORDER);
    }

    public static int stripeLength(DirectBuffer b, int offset) {
        return b.getInt(offset + STRIPE_LENGTH_OFFSET, FrameHeader.ORDER);
    }

    public static int stripes(DirectBuffer b, int offset) {
        return b.getInt(offset + STRIPES_OFFSET, FrameHeader.ORDER);
    }

    public static int stripeIndex(DirectBuffer b, int offset) {
        return b.getInt(offset + STRIPE_INDEX_OFFSET, FrameHeader.ORDER);
    }
}
