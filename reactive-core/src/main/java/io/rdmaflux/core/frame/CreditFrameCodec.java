package io.rdmaflux.core.frame;

import org.agrona.MutableDirectBuffer;

/**
 * Encodes {@link FrameType#CREDIT} frames: a header with no payload whose credit field carries
 * the new credits granted. Sent only when credit accumulated past a threshold (or the peer holds
 * none) and no DATA frame was going the other way to carry it (seed 001 &sect;3.1).
 */
public final class CreditFrameCodec {
    /** A CREDIT frame is exactly a header. */
    public static final int LENGTH = FrameHeader.LENGTH;

    private CreditFrameCodec() {
    }

    /** @return the frame length in bytes */
    public static int encode(MutableDirectBuffer b, int offset, int streamId, int credits) {
        if (credits < 0) {
            throw new IllegalArgumentException("a CREDIT frame grants credits >= 0 but it was " + credits);
        }
        FrameHeader.write(b, offset, FrameType.CREDIT, 0, streamId, 0, credits, 0, 0);
        return LENGTH;
    }
}
