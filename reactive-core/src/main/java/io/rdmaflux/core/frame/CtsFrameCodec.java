package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#CTS} frames, the "reply rendezvous" of seed 001 &sect;3
 * (Fig. 2): the receiver grants a registered message buffer to the message the PSN names, and the
 * sender RDMA WRITEs the message there. A control frame: it consumes no credit.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (5)    |           flags (0)           |  0
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
 * |            remote address of the message buffer               | 24
 * +                        (u64, LE)                              +
 * |                                                               | 28
 * +---------------------------------------------------------------+
 * |                 rkey of the message buffer                    | 32
 * +---------------------------------------------------------------+
 * |                 flags (u32): bit 0 DISCARD                    | 36
 * +---------------------------------------------------------------+
 * </pre>
 *
 * <p>A CTS with {@link #DISCARD} tells the sender that the receiver closed its inbound side (or already
 * has the message, after a failover re-sent its RTS): the message counts as delivered and no data is
 * written, as DATA frames arriving after a {@code receive()} cancel are acknowledged and dropped.
 */
public final class CtsFrameCodec {
    /** Length of a CTS frame in bytes. */
    public static final int LENGTH = FrameHeader.LENGTH + 16;
    /** Offset of the remote address of the message buffer (u64). */
    public static final int ADDRESS_OFFSET = FrameHeader.LENGTH;
    /** Offset of the rkey of the message buffer (u32). */
    public static final int RKEY_OFFSET = FrameHeader.LENGTH + 8;
    /** Offset of the CTS flags (u32). */
    public static final int FLAGS_OFFSET = FrameHeader.LENGTH + 12;
    /** Flag: the receiver drops the message; write nothing, count it delivered. */
    public static final int DISCARD = 0x1;

    private CtsFrameCodec() {
    }

    /**
     * @param psn           the PSN of the message the buffer is granted to
     * @param credits       the credit word the frame piggybacks
     * @param messageLength the whole message in bytes, &gt;= 0
     * @param remoteAddress where the sender writes the message
     * @param rkey          the rkey of the message buffer
     * @param flags         0 or {@link #DISCARD}
     * @return the frame length in bytes
     * @throws IllegalArgumentException if {@code messageLength} is negative
     */
    public static int encode(MutableDirectBuffer b, int offset, int psn, int credits, int messageLength,
                             long remoteAddress, int rkey, int flags) {
        FrameHeader.requireMessageLength(messageLength);
        FrameHeader.write(b, offset, FrameType.CTS, 0, 0, psn, credits, LENGTH - FrameHeader.LENGTH, messageLength);
        b.putLong(offset + ADDRESS_OFFSET, remoteAddress, FrameHeader.ORDER);
        b.putInt(offset + RKEY_OFFSET, rkey, FrameHeader.ORDER);
        b.putInt(offset + FLAGS_OFFSET, flags, FrameHeader.ORDER);
        return LENGTH;
    }

    /**
     * Checks that a received CTS frame has its fixed 16-byte payload.
     *
     * @throws FrameFormatException naming the payload length found
     */
    public static void validatePayload(DirectBuffer b, int offset) {
        FrameHeader.requirePayload(b, offset, FrameType.CTS, LENGTH - FrameHeader.LENGTH);
    }

    public static long remoteAddress(DirectBuffer b, int offset) {
        return b.getLong(offset + ADDRESS_OFFSET, FrameHeader.ORDER);
    }

    public static int rkey(DirectBuffer b, int offset) {
        return b.getInt(offset + RKEY_OFFSET, FrameHeader.ORDER);
    }

    public static int flags(DirectBuffer b, int offset) {
        return b.getInt(offset + FLAGS_OFFSET, FrameHeader.ORDER);
    }
}
