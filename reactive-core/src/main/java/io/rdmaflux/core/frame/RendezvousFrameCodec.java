package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes the three frames of the zero-copy rendezvous (seed 001 &sect;3, Fig. 2: start,
 * reply and finish rendezvous; RDMA WRITE for the data) with one FIN per subchannel that carried a
 * stripe (seed 000 &sect;5.3). All three carry the message's PSN in the header's PSN field and its
 * length in the message length field.
 *
 * <pre>
 * RTS: header only (payload length 0). Consumes one buffer credit and one message credit.
 *
 * CTS: header + 16 bytes                        FIN: header + 16 bytes
 * +-------------------------------------+       +-------------------------------------+
 * | remote address (u64, LE)        24  |       | stripe offset in the message    24  |
 * +-------------------------------------+       +-------------------------------------+
 * | rkey (u32)                      32  |       | stripe length in bytes          28  |
 * +-------------------------------------+       +-------------------------------------+
 * | flags (u32): bit 0 DISCARD      36  |       | stripes of the message (FINs)   32  |
 * +-------------------------------------+       +-------------------------------------+
 *                                               | stripe index in [0, stripes)    36  |
 *                                               +-------------------------------------+
 * </pre>
 *
 * <p>The stripe index lets the receiver count each stripe once when a stripe is re-sent after its
 * rail failed. A CTS with {@link #CTS_DISCARD} tells the sender that the receiver closed its inbound side:
 * the message counts as delivered and no data is written (as DATA frames arriving after a
 * {@code receive()} cancel are acknowledged and dropped).
 */
public final class RendezvousFrameCodec {
    /** Length of an RTS frame. */
    public static final int RTS_LENGTH = FrameHeader.LENGTH;
    /** Length of a CTS frame. */
    public static final int CTS_LENGTH = FrameHeader.LENGTH + 16;
    /** Length of a FIN frame. */
    public static final int FIN_LENGTH = FrameHeader.LENGTH + 16;
    /** CTS flag: the receiver drops the message; write nothing, count it delivered. */
    public static final int CTS_DISCARD = 0x1;

    private static final int CTS_ADDRESS = FrameHeader.LENGTH;
    private static final int CTS_RKEY = FrameHeader.LENGTH + 8;
    private static final int CTS_FLAGS = FrameHeader.LENGTH + 12;
    private static final int FIN_OFFSET = FrameHeader.LENGTH;
    private static final int FIN_LENGTH_FIELD = FrameHeader.LENGTH + 4;
    private static final int FIN_STRIPES = FrameHeader.LENGTH + 8;
    private static final int FIN_INDEX = FrameHeader.LENGTH + 12;

    private RendezvousFrameCodec() {
    }

    /** @return the frame length in bytes */
    public static int encodeRts(MutableDirectBuffer b, int offset, int psn, int credits, int messageLength) {
        requireLength(messageLength);
        FrameHeader.write(b, offset, FrameType.RTS, 0, 0, psn, credits, 0, messageLength);
        return RTS_LENGTH;
    }

    /** @return the frame length in bytes */
    public static int encodeCts(MutableDirectBuffer b, int offset, int psn, int credits, int messageLength,
                                long remoteAddress, int rkey, int flags) {
        requireLength(messageLength);
        FrameHeader.write(b, offset, FrameType.CTS, 0, 0, psn, credits, CTS_LENGTH - FrameHeader.LENGTH, messageLength);
        b.putLong(offset + CTS_ADDRESS, remoteAddress, FrameHeader.ORDER);
        b.putInt(offset + CTS_RKEY, rkey, FrameHeader.ORDER);
        b.putInt(offset + CTS_FLAGS, flags, FrameHeader.ORDER);
        return CTS_LENGTH;
    }

    /**
     * @return the frame length in bytes
     * @throws IllegalArgumentException if the stripe is outside the message or the stripe count is not positive
     */
    public static int encodeFin(MutableDirectBuffer b, int offset, int psn, int credits, int messageLength,
                                int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        requireLength(messageLength);
        if (stripeOffset < 0 || stripeLength < 0 || (long) stripeOffset + stripeLength > messageLength || stripes < 1
            || stripeIndex < 0 || stripeIndex >= 64) {
            throw new IllegalArgumentException("FIN stripe " + stripeIndex + " [" + stripeOffset + ", +" + stripeLength + ") of "
                + stripes + " stripes must lie inside the " + messageLength + "-byte message, index in [0, 64)");
        }
        FrameHeader.write(b, offset, FrameType.FIN, 0, 0, psn, credits, FIN_LENGTH - FrameHeader.LENGTH, messageLength);
        b.putInt(offset + FIN_OFFSET, stripeOffset, FrameHeader.ORDER);
        b.putInt(offset + FIN_LENGTH_FIELD, stripeLength, FrameHeader.ORDER);
        b.putInt(offset + FIN_STRIPES, stripes, FrameHeader.ORDER);
        b.putInt(offset + FIN_INDEX, stripeIndex, FrameHeader.ORDER);
        return FIN_LENGTH;
    }

    private static void requireLength(int messageLength) {
        if (messageLength < 0) {
            throw new IllegalArgumentException("messageLength >= 0 required but it was " + messageLength);
        }
    }

    /**
     * Checks that a received CTS or FIN frame has its fixed payload.
     *
     * @throws FrameFormatException naming the frame type and the length found
     */
    public static void validatePayload(DirectBuffer b, int offset, FrameType type) {
        int expected = switch (type) {
            case RTS -> 0;
            case CTS -> CTS_LENGTH - FrameHeader.LENGTH;
            case FIN -> FIN_LENGTH - FrameHeader.LENGTH;
            default -> throw new IllegalArgumentException(type + " is not a rendezvous frame");
        };
        int payload = FrameHeader.payloadLength(b, offset);
        if (payload != expected) {
            throw new FrameFormatException(type + " frame carries " + payload + " payload bytes but its layout has " + expected);
        }
    }

    public static long ctsRemoteAddress(DirectBuffer b, int offset) {
        return b.getLong(offset + CTS_ADDRESS, FrameHeader.ORDER);
    }

    public static int ctsRkey(DirectBuffer b, int offset) {
        return b.getInt(offset + CTS_RKEY, FrameHeader.ORDER);
    }

    public static int ctsFlags(DirectBuffer b, int offset) {
        return b.getInt(offset + CTS_FLAGS, FrameHeader.ORDER);
    }

    public static int finStripeOffset(DirectBuffer b, int offset) {
        return b.getInt(offset + FIN_OFFSET, FrameHeader.ORDER);
    }

    public static int finStripeLength(DirectBuffer b, int offset) {
        return b.getInt(offset + FIN_LENGTH_FIELD, FrameHeader.ORDER);
    }

    public static int finStripes(DirectBuffer b, int offset) {
        return b.getInt(offset + FIN_STRIPES, FrameHeader.ORDER);
    }

    public static int finStripeIndex(DirectBuffer b, int offset) {
        return b.getInt(offset + FIN_INDEX, FrameHeader.ORDER);
    }
}
