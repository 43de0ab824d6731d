package io.rdmaflux.rsocket;

import io.rdmaflux.core.RdmaConnection;
import io.rsocket.frame.FrameLengthCodec;

/** The frame-length rules both transports share. */
final class FrameLimits {
    /** rdmaflux's default {@code RdmaNode.Builder.maxMessageBytes}: 1 MiB. */
    static final int DEFAULT_MAX_FRAME_LENGTH = 1 << 20;
    /** Smallest useful limit: a SETUP frame with a short MIME type must fit. */
    static final int MIN_FRAME_LENGTH = 64;

    private FrameLimits() {
    }

    static int check(int maxFrameLength) {
        if (maxFrameLength < MIN_FRAME_LENGTH || maxFrameLength > FrameLengthCodec.FRAME_LENGTH_MASK) {
            throw new IllegalArgumentException("maxFrameLength in [" + MIN_FRAME_LENGTH + ", " + FrameLengthCodec.FRAME_LENGTH_MASK
                + "] bytes required (RSocket's frame length is 24 bits) but it was " + maxFrameLength);
        }
        return maxFrameLength;
    }

    /**
     * Fails (and aborts {@code c}) when the peer would refuse frames this side is allowed to send: RSocket
     * checks payloads against {@code maxFrameLength()} only, so a larger frame would fail the connection later.
     */
    static RdmaConnection requireFits(RdmaConnection c, int maxFrameLength) {
        int peer = c.maxMessageBytes();
        if (maxFrameLength > peer) {
            c.abort();
            throw new IllegalStateException("maxFrameLength " + maxFrameLength + " bytes exceeds the " + peer
                + "-byte maxMessageBytes of the peer of " + c + ": give the peer's node RdmaNode.Builder.maxMessageBytes("
                + maxFrameLength + ") or more, or this transport a maxFrameLength of at most " + peer
                + " (with RSocket fragmentation, an MTU below it)");
        }
        return c;
    }
}
