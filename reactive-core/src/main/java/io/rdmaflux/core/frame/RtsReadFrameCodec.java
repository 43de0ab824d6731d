package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#RTS_READ} frames, the "start rendezvous" of the READ
 * rendezvous (seed 001 &sect;3, Fig. 2, with the data moved by the receiver): the sender announces one
 * large message and where the receiver may RDMA READ it. Like an {@link FrameType#RTS} it consumes one
 * buffer credit and one message credit; unlike it, no CTS answers it: the receiver reads the message
 * once it has a buffer for it and answers a {@link FrameType#READ_FIN}. The node's rails are ports of
 * one device, so one address and rkey serve every rail.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (8)    |           flags (0)           |  0
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
 * |        address of the message in the sender's memory          | 24
 * +                        (u64, LE)                              +
 * |                                                               | 28
 * +---------------------------------------------------------------+
 * |        rkey of the registration covering the message          | 32
 * +---------------------------------------------------------------+
 * |                       reserved (0)                            | 36
 * +---------------------------------------------------------------+
 * </pre>
 */
public final class RtsReadFrameCodec {
    /** Length of an RTS_READ frame in bytes. */
    public static final int LENGTH = FrameHeader.LENGTH + 16;
    /** Offset of the message's address in the sender's memory (u64). */
    public static final int ADDRESS_OFFSET = FrameHeader.LENGTH;
    /** Offset of the rkey of the sender's registration (u32). */
    public static final int RKEY_OFFSET = FrameHeader.LENGTH + 8;
    /** Offset of the reserved word (u32, 0). */
    public static final int RESERVED_OFFSET = FrameHeader.LENGTH + 12;

    private RtsReadFrameCodec() {
    }

    /**
     * @param psn           the PSN of the message
     * @param credits       the credit word the frame piggybacks
     * @param messageLength the whole message in bytes, &gt;= 0
     * @param address       where the message starts in the sender's registered memory
     * @param rkey          the rkey of that registration (REMOTE_READ)
     * @return the frame length in bytes
     * @throws IllegalArgumentException if {@code messageLength} is negative
     */
    public static int encode(MutableDirectBuffer b, int offset, int psn, int credits, int messageLength, long address, int rkey) {
        FrameHeader.requireMessageLength(messageLength);
        FrameHeader.write(b, offset, FrameType.RTS_READ, 0, 0, psn, credits, LENGTH - FrameHeader.LENGTH, messageLength);
        b.putLong(offset + ADDRESS_OFFSET, address, FrameHeader.ORDER);
        b.putInt(offset + RKEY_OFFSET, rkey, FrameHeader.ORDER);
        b.putInt(offset + RESERVED_OFFSET, 0, FrameHeader.ORDER);
        return LENGTH;
    }

    /**
     * Checks that a received RTS_READ frame has its fixed 16-byte payload.
     *
     * @throws FrameFormatException naming the payload length found
     */
    public static void validatePayload(DirectBuffer b, int offset) {
        FrameHeader.requirePayload(b, offset, FrameType.RTS_READ, LENGTH - FrameHeader.LENGTH);
    }

    public static long address(DirectBuffer b, int offset) {
        return b.getLong(offset + ADDRESS_OFFSET, FrameHeader.ORDER);
    }

    public static int rkey(DirectBuffer b, int offset) {
        return b.getInt(offset + RKEY_OFFSET, FrameHeader.ORDER);
    }
}
