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
 * |     optional: rkey of rail 0, rail 1, ... (u32 each)          | 40
 * +                              ...                              +
 * </pre>
 *
 * <p><b>Rails over several devices</b> (seed 000 &sect;4.2, one registration per HCA): the message buffer
 * is registered on every device of the receiving node, so each rail the sender stripes over needs the rkey
 * of its own device. Such a CTS carries one rkey per rail of the connection after the flags (payload
 * {@code 16 + 4 x rails} bytes; the rkey field at 32 is rail 0's). A CTS whose rails share one device has
 * the 16-byte payload and one rkey for every rail.
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
    /** Offset of the first per-rail rkey, when the payload carries them. */
    public static final int RAIL_RKEYS_OFFSET = FrameHeader.LENGTH + 16;
    /** Most rails whose rkeys a CTS carries. */
    public static final int MAX_RAIL_RKEYS = 255;
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
     * Encodes a CTS with one rkey per rail ({@code railRkeys[r]} for rail {@code r}); the 16-byte form when
     * every rail has the same rkey (rails on one device).
     *
     * @return the frame length in bytes: {@link #LENGTH}, or {@code LENGTH + 4 x rails}
     * @throws IllegalArgumentException if {@code messageLength} is negative or there are no or too many rails
     */
    public static int encode(MutableDirectBuffer b, int offset, int psn, int credits, int messageLength,
                             long remoteAddress, int[] railRkeys, int flags) {
        if (railRkeys.length < 1 || railRkeys.length > MAX_RAIL_RKEYS) {
            throw new IllegalArgumentException("railRkeys in [1, " + MAX_RAIL_RKEYS + "] required but there were " + railRkeys.length);
        }
        boolean same = true;
        for (int k : railRkeys) {
            same &= k == railRkeys[0];
        }
        int len = encode(b, offset, psn, credits, messageLength, remoteAddress, railRkeys[0], flags);
        if (same) {
            return len;
        }
        b.putInt(offset + FrameHeader.PAYLOAD_LENGTH_OFFSET, LENGTH - FrameHeader.LENGTH + 4 * railRkeys.length, FrameHeader.ORDER);
        for (int r = 0; r < railRkeys.length; r++) {
            b.putInt(offset + RAIL_RKEYS_OFFSET + 4 * r, railRkeys[r], FrameHeader.ORDER);
        }
        return length(railRkeys.length);
    }

    /** Length of a CTS carrying {@code rails} per-rail rkeys, bytes. */
    public static int length(int rails) {
        return LENGTH + 4 * rails;
    }

    /**
     * Checks that a received CTS frame has its 16-byte payload, or that plus 4 bytes per rail.
     *
     * @throws FrameFormatException naming the payload length found
     */
    public static void validatePayload(DirectBuffer b, int offset) {
        int payload = FrameHeader.payloadLength(b, offset);
        int fixed = LENGTH - FrameHeader.LENGTH;
        if (payload != fixed && (payload < fixed + 4 || payload > fixed + 4 * MAX_RAIL_RKEYS || (payload - fixed) % 4 != 0)) {
            throw new FrameFormatException("CTS frame carries " + payload + " payload bytes but its layout has " + fixed
                + ", or " + fixed + " + 4 per rail rkey");
        }
    }

    /** Rails whose rkeys the CTS carries: 0 when one rkey ({@link #rkey(DirectBuffer, int)}) serves every rail. */
    public static int railRkeyCount(DirectBuffer b, int offset) {
        return (FrameHeader.payloadLength(b, offset) - (LENGTH - FrameHeader.LENGTH)) / 4;
    }

    /** The rkey of rail {@code rail}, of a CTS with {@link #railRkeyCount} above {@code rail}. */
    public static int rkey(DirectBuffer b, int offset, int rail) {
        return b.getInt(offset + RAIL_RKEYS_OFFSET + 4 * rail, FrameHeader.ORDER);
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
