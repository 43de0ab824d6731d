package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#REGION_REVOKE} frames, the end of an exposed region's life. With
 * {@link #BY_OWNER} the region's owner revokes it: the user stops issuing operations on it, and once
 * those in flight completed it answers with a release. Without the flag the user releases it (on its
 * own, or as that answer): it will post no more RDMA on it, and the owner deregisters the region's
 * memory registration, so its rkeys are dead. The PSN field carries the region id (the owner's). A
 * control frame: no credit, no payload.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (16)   |   flags: bit 0 BY_OWNER       |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |                          region id                            |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                      payload length (0)                       | 16
 * +---------------------------------------------------------------+
 * |                              0                                | 20
 * +---------------------------------------------------------------+
 * </pre>
 */
public final class RegionRevokeFrameCodec {
    /** Frame length in bytes. */
    public static final int LENGTH = FrameHeader.LENGTH;
    /** Flag: the region's owner revokes it (else its user releases it). */
    public static final int BY_OWNER = 0x1;

    private RegionRevokeFrameCodec() {
    }

    /** @return the frame length in bytes */
    public static int encode(MutableDirectBuffer b, int offset, int regionId, int credits, boolean byOwner) {
        FrameHeader.write(b, offset, FrameType.REGION_REVOKE, byOwner ? BY_OWNER : 0, 0, regionId, credits, 0, 0);
        return LENGTH;
    }

    /** @throws FrameFormatException if the frame carries a payload */
    public static void validatePayload(DirectBuffer b, int offset) {
        FrameHeader.requirePayload(b, offset, FrameType.REGION_REVOKE, 0);
    }

    public static int regionId(DirectBuffer b, int offset) {
        return FrameHeader.psn(b, offset);
    }

    public static boolean byOwner(DirectBuffer b, int offset) {
        return (FrameHeader.flags(b, offset) & BY_OWNER) != 0;
    }
}
