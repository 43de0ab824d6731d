package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#EPOCH_SYNC} frames: the synchronization message that ends an
 * access epoch, one on every subchannel the epoch used (seed 002 &sect;3.2, "Multiple Synchronization
 * Messages": data on one subchannel may not have arrived when another's synchronization message did,
 * so each subchannel carries its own). RC places the data of every RDMA WRITE posted on a subchannel
 * before a SEND posted after it, so the target that holds the synchronization message of every rail in
 * the mask holds every put of the epoch. The PSN field carries the epoch number. The rail mask names
 * every subchannel that carries a synchronization message of this generation; a generation is re-sent
 * (one higher) on the surviving rails when a rail of the mask fails before the target acknowledged. A
 * control frame: no credit.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (17)   |           flags (0)           |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |                        epoch number                           |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                     payload length (24)                       | 16
 * +---------------------------------------------------------------+
 * |                              0                                | 20
 * +---------------------------------------------------------------+
 * |                 rail mask (u64): bit r for rail r             | 24
 * +                                                               +
 * |                                                               | 28
 * +---------------------------------------------------------------+
 * |                       generation (u32)                        | 32
 * +---------------------------------------------------------------+
 * |                   puts in the epoch (u32)                     | 36
 * +---------------------------------------------------------------+
 * |                bytes put in the epoch (u64)                   | 40
 * +                                                               +
 * |                                                               | 44
 * +---------------------------------------------------------------+
 * </pre>
 */
public final class EpochSyncFrameCodec {
    /** Frame length in bytes. */
    public static final int LENGTH = FrameHeader.LENGTH + 24;
    public static final int RAIL_MASK_OFFSET = FrameHeader.LENGTH;
    public static final int GENERATION_OFFSET = FrameHeader.LENGTH + 8;
    public static final int PUTS_OFFSET = FrameHeader.LENGTH + 12;
    public static final int BYTES_OFFSET = FrameHeader.LENGTH + 16;

    private EpochSyncFrameCodec() {
    }

    /**
     * @return the frame length in bytes
     * @throws IllegalArgumentException if the rail mask is 0 or a count is negative
     */
    public static int encode(MutableDirectBuffer b, int offset, int epoch, int credits, long railMask, int generation, int puts,
                             long bytesPut) {
        if (railMask == 0) {
            throw new IllegalArgumentException("a non-empty railMask required but it was 0");
        }
        if (generation < 0 || puts < 0 || bytesPut < 0) {
            throw new IllegalArgumentException("generation, puts and bytesPut >= 0 required but they were " + generation + ", " + puts
                + ", " + bytesPut);
        }
        FrameHeader.write(b, offset, FrameType.EPOCH_SYNC, 0, 0, epoch, credits, LENGTH - FrameHeader.LENGTH, 0);
        b.putLong(offset + RAIL_MASK_OFFSET, railMask, FrameHeader.ORDER);
        b.putInt(offset + GENERATION_OFFSET, generation, FrameHeader.ORDER);
        b.putInt(offset + PUTS_OFFSET, puts, FrameHeader.ORDER);
        b.putLong(offset + BYTES_OFFSET, bytesPut, FrameHeader.ORDER);
        return LENGTH;
    }

    /** @throws FrameFormatException if the payload is not 24 bytes, the rail mask is 0 or a count negative */
    public static void validatePayload(DirectBuffer b, int offset) {
        FrameHeader.requirePayload(b, offset, FrameType.EPOCH_SYNC, LENGTH - FrameHeader.LENGTH);
        if (railMask(b, offset) == 0) {
            throw new FrameFormatException("EPOCH_SYNC frame with an empty rail mask");
        }
        if (generation(b, offset) < 0 || puts(b, offset) < 0 || bytesPut(b, offset) < 0) {
            throw new FrameFormatException("EPOCH_SYNC frame with a negative generation (" + generation(b, offset) + "), put count ("
                + puts(b, offset) + ") or byte count (" + bytesPut(b, offset) + ")");
        }
    }

    public static int epoch(DirectBuffer b, int offset) {
        return FrameHeader.psn(b, offset);
    }

    public static long railMask(DirectBuffer b, int offset) {
        return b.getLong(offset + RAIL_MASK_OFFSET, FrameHeader.ORDER);
    }

    public static int generation(DirectBuffer b, int offset) {
        return b.getInt(offset + GENERATION_OFFSET, FrameHeader.ORDER);
    }

    public static int puts(DirectBuffer b, int offset) {
        return b.getInt(offset + PUTS_OFFSET, FrameHeader.ORDER);
    }

    public static long bytesPut(DirectBuffer b, int offset) {
        return b.getLong(offset + BYTES_OFFSET, FrameHeader.ORDER);
    }
}
