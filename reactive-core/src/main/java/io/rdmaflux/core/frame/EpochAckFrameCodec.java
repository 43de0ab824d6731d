package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#EPOCH_ACK} frames: the target holds the synchronization message
 * of every subchannel of access epoch {@code epoch} ({@link EpochSyncFrameCodec}), so every put of it is
 * in its memory and it was told. The origin completes the epoch's fence on it. The PSN field carries the
 * epoch number. A control frame: no credit, no payload.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (18)   |           flags (0)           |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |                        epoch number                           |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                      payload length (0)                       | 16
 * +---------------------------------------------------------------+
 * |                              0                                | 20
 * +---------------------------------------------------------------+
 * </pre>
 */
public final class EpochAckFrameCodec {
    /** Frame length in bytes. */
    public static final int LENGTH = FrameHeader.LENGTH;

    private EpochAckFrameCodec() {
    }

    /** @return the frame length in bytes */
    public static int encode(MutableDirectBuffer b, int offset, int epoch, int credits) {
        FrameHeader.write(b, offset, FrameType.EPOCH_ACK, 0, 0, epoch, credits, 0, 0);
        return LENGTH;
    }

    /** @throws FrameFormatException if the frame carries a payload */
    public static void validatePayload(DirectBuffer b, int offset) {
        FrameHeader.requirePayload(b, offset, FrameType.EPOCH_ACK, 0);
    }

    public static int epoch(DirectBuffer b, int offset) {
        return FrameHeader.psn(b, offset);
    }
}
