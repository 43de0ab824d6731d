package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#READ_FIN} frames, the "finish rendezvous" of the READ rendezvous
 * (seed 001 &sect;3, Fig. 2): the receiver has RDMA-READ every stripe of the message the PSN names
 * (its READs completed, so the NIC no longer touches the sender's memory), and the sender may complete
 * the send and unpin the memory. One per message, on any rail (the READs' completions were all seen by
 * the receiver, so, unlike the WRITE rendezvous's FIN, it needs no per-rail ordering). A control frame:
 * it consumes no credit.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (9)    |           flags (0)           |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |                     PSN of the message                        |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                     payload length (8)                        | 16
 * +---------------------------------------------------------------+
 * |                   message length in bytes                     | 20
 * +---------------------------------------------------------------+
 * |                 flags (u32): bit 0 DISCARD                    | 24
 * +---------------------------------------------------------------+
 * |                       reserved (0)                            | 28
 * +---------------------------------------------------------------+
 * </pre>
 *
 * <p>With {@link #DISCARD} the receiver read nothing: it closed its inbound side, so the message counts
 * as delivered without being read (as a CTS with {@link CtsFrameCodec#DISCARD} in the WRITE rendezvous).
 */
public final class ReadFinFrameCodec {
    /** Length of a READ_FIN frame in bytes. */
    public static final int LENGTH = FrameHeader.LENGTH + 8;
    /** Offset of the READ_FIN flags (u32). */
    public static final int FLAGS_OFFSET = FrameHeader.LENGTH;
    /** Offset of the reserved word (u32, 0). */
    public static final int RESERVED_OFFSET = FrameHeader.LENGTH + 4;
    /** Flag: the receiver dropped the message unread; count it delivered. */
    public static final int DISCARD = 0x1;

    private ReadFinFrameCodec() {
    }

    /**
     * @param psn           the PSN of the message
     * @param credits       the credit word the frame piggybacks
     * @param messageLength the whole message in bytes, &gt;= 0
     * @param flags         0 or {@link #DISCARD}
     * @return the frame length in bytes
     * @throws IllegalArgumentException if {@code messageLength} is negative
     */
    public static int encode(MutableDirectBuffer b, int offset, int psn, int credits, int messageLength, int flags) {
        FrameHeader.requireMessageLength(messageLength);
        FrameHeader.write(b, offset, FrameType.READ_FIN, 0, 0, psn, credits, LENGTH - FrameHeader.LENGTH, messageLength);
        b.putInt(offset + FLAGS_OFFSET, flags, FrameHeader.ORDER);
        b.putInt(offset + RESERVED_OFFSET, 0, FrameHeader.ORDER);
        return LENGTH;
    }

    /**
     * Checks that a received READ_FIN frame has its fixed 8-byte payload.
     *
     * @throws FrameFormatException naming the payload length found
     */
    public static void validatePayload(DirectBuffer b, int offset) {
        FrameHeader.requirePayload(b, offset, FrameType.READ_FIN, LENGTH - FrameHeader.LENGTH);
    }

    public static int flags(DirectBuffer b, int offset) {
        return b.getInt(offset + FLAGS_OFFSET, FrameHeader.ORDER);
    }
}
