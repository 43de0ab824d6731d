package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes {@link FrameType#CHANNEL_CONTROL} frames: a header and an opaque payload of the channel kind
 * that sent it. The connection never reads the payload: the RC send/receive channel hands it to
 * {@code ChannelEvents.onChannelControl}, where a kind built over that channel (a decorator such as
 * the eager RDMA ring of seed 001 &sect;4.1&ndash;4.6) intercepts it. No credit; it uses a control
 * receive buffer like CREDIT or CTS. A peer of a kind that sends none never sees one, so the frame needs
 * no protocol version of its own: both ends agreed the kind in the handshake.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (8)    |           flags (0)           |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |                            0                                  |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                 payload length (1 .. buffer - 24)             | 16
 * +---------------------------------------------------------------+
 * |                     message length (0)                        | 20
 * +---------------------------------------------------------------+
 * |           payload: the channel kind's own control message ... | 24
 * </pre>
 */
public final class ChannelControlFrameCodec {
    private ChannelControlFrameCodec() {
    }

    /**
     * Encodes the frame with {@code length} payload bytes copied from {@code src} at {@code srcOffset}.
     *
     * @return the frame length in bytes
     * @throws IllegalArgumentException if {@code length} is not positive or {@code credits} negative
     */
    public static int encode(MutableDirectBuffer b, int offset, int credits, DirectBuffer src, int srcOffset, int length) {
        if (length <= 0) {
            throw new IllegalArgumentException("length > 0 required but it was " + length);
        }
        if (credits < 0) {
            throw new IllegalArgumentException("credits >= 0 required but it was " + credits);
        }
        FrameHeader.write(b, offset, FrameType.CHANNEL_CONTROL, 0, 0, 0, credits, length, 0);
        b.putBytes(offset + FrameHeader.LENGTH, src, srcOffset, length);
        return FrameHeader.LENGTH + length;
    }

    /** Offset of the payload of the frame at {@code offset}. */
    public static int payloadOffset(int offset) {
        return offset + FrameHeader.LENGTH;
    }

    /**
     * Checks that the frame carries a payload.
     *
     * @throws FrameFormatException naming the length when it is empty
     */
    public static void validatePayload(DirectBuffer b, int offset) {
        int len = FrameHeader.payloadLength(b, offset);
        if (len <= 0) {
            throw new FrameFormatException("CHANNEL_CONTROL frame with an empty payload (" + len + " bytes)");
        }
    }
}
