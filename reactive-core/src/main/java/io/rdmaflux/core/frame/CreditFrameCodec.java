package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes {@link FrameType#CREDIT} frames: a header with no payload whose credit field carries
 * the new credits granted. Sent only when credit accumulated past a threshold (or the peer holds
 * none) and no DATA frame was going the other way to carry it (seed 001 &sect;3.1).
 *
 * <p>With {@link FrameHeader#FLAG_INBOUND_CLOSED} it also tells the peer that this side closed its
 * inbound side: no message credit will come any more, and the PSN field holds the first PSN its
 * subscriber did not get (messages are handed over in PSN order, from 0), so the peer knows exactly
 * which of its messages were delivered: those before it. The sender puts it on every rail once.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (2)    | flags: 0x10 INBOUND_CLOSED, 0 |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |     PSN: 0, or the first PSN not delivered (INBOUND_CLOSED)   |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                     payload length (0)                        | 16
 * +---------------------------------------------------------------+
 * |                     message length (0)                        | 20
 * +---------------------------------------------------------------+
 * </pre>
 */
public final class CreditFrameCodec {
    /** A CREDIT frame is exactly a header. */
    public static final int LENGTH = FrameHeader.LENGTH;

    private CreditFrameCodec() {
    }

    /**
     * @return the frame length in bytes
     * @throws IllegalArgumentException if {@code credits} is negative
     */
    public static int encode(MutableDirectBuffer b, int offset, int streamId, int credits) {
        requireCredits(credits);
        FrameHeader.write(b, offset, FrameType.CREDIT, 0, streamId, 0, credits, 0, 0);
        return LENGTH;
    }

    /**
     * Encodes a CREDIT frame with {@link FrameHeader#FLAG_INBOUND_CLOSED}.
     *
     * @param firstUndeliveredPsn the PSN of the first message the subscriber did not get
     * @return the frame length in bytes
     * @throws IllegalArgumentException if {@code credits} is negative
     */
    public static int encodeInboundClosed(MutableDirectBuffer b, int offset, int credits, int firstUndeliveredPsn) {
        requireCredits(credits);
        FrameHeader.write(b, offset, FrameType.CREDIT, FrameHeader.FLAG_INBOUND_CLOSED, 0, firstUndeliveredPsn, credits, 0, 0);
        return LENGTH;
    }

    private static void requireCredits(int credits) {
        if (credits < 0) {
            throw new IllegalArgumentException("a CREDIT frame grants credits >= 0 but it was " + credits);
        }
    }

    /** Whether a received CREDIT frame says its sender closed its inbound side. */
    public static boolean isInboundClosed(DirectBuffer b, int offset) {
        return (FrameHeader.flags(b, offset) & FrameHeader.FLAG_INBOUND_CLOSED) != 0;
    }
}
