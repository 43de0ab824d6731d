package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes {@link FrameType#RAIL_DOWN} frames: a header with no payload whose PSN field names the
 * failed rail (its index in the connection, from 0). Sent once per failed rail on a live rail, so a
 * receiver that did not see the failure itself (the dead port is on the sender's path only) stops
 * using the rail as well.
 */
public final class RailDownFrameCodec {
    /** A RAIL_DOWN frame is exactly a header. */
    public static final int LENGTH = FrameHeader.LENGTH;

    private RailDownFrameCodec() {
    }

    /**
     * @return the frame length in bytes
     * @throws IllegalArgumentException if {@code rail} is not in [0, 255]
     */
    public static int encode(MutableDirectBuffer b, int offset, int credits, int rail) {
        if (rail < 0 || rail > 255) {
            throw new IllegalArgumentException("rail in [0, 255] required but it was " + rail);
        }
        FrameHeader.write(b, offset, FrameType.RAIL_DOWN, 0, 0, rail, credits, 0, 0);
        return LENGTH;
    }

    /** The failed rail named by the frame. */
    public static int rail(DirectBuffer b, int offset) {
        return FrameHeader.psn(b, offset);
    }
}
