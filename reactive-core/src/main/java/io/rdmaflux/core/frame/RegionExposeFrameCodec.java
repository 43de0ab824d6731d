package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes and decodes {@link FrameType#REGION_EXPOSE} frames: the sender exposes one registered region
 * of its memory to the peer for one-sided RDMA (seed 002 &sect;3.2: the target "posts the buffers for the
 * window", registered on every device): its address, length, the access rights granted, and the rkey
 * to use on each rail. The PSN field carries the region id, unique per connection and direction. A
 * control frame: no credit.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (15)   |           flags (0)           |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |                          region id                            |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                payload length (24 + 4 * rails)                | 16
 * +---------------------------------------------------------------+
 * |                              0                                | 20
 * +---------------------------------------------------------------+
 * |                   address (u64, virtual address)              | 24
 * +                                                               +
 * |                                                               | 28
 * +---------------------------------------------------------------+
 * |                   length in bytes (u64, &gt; 0)                | 32
 * +                                                               +
 * |                                                               | 36
 * +---------------------------------------------------------------+
 * | access (u16): bit 0 READ, 1 WRITE, 2 ATOMIC |   rails (u16)     | 40
 * +---------------------------------------------------------------+
 * |                  rkey of rail 0 ... rail n-1                  | 44
 * </pre>
 */
public final class RegionExposeFrameCodec {
    /** Offset of the address (u64). */
    public static final int ADDRESS_OFFSET = FrameHeader.LENGTH;
    /** Offset of the length (u64). */
    public static final int LENGTH_OFFSET = FrameHeader.LENGTH + 8;
    /** Offset of the access bits (u16). */
    public static final int ACCESS_OFFSET = FrameHeader.LENGTH + 16;
    /** Offset of the rail count (u16). */
    public static final int RAILS_OFFSET = FrameHeader.LENGTH + 18;
    /** Offset of the first rkey (u32). */
    public static final int RKEYS_OFFSET = FrameHeader.LENGTH + 20;
    /** Access bit: the peer may RDMA READ the region. */
    public static final int ACCESS_READ = 0x1;
    /** Access bit: the peer may RDMA WRITE the region. */
    public static final int ACCESS_WRITE = 0x2;
    /** Access bit: the peer may run atomics (fetch-and-add, compare-and-swap) on the region's 8-byte words. */
    public static final int ACCESS_ATOMIC = 0x4;

    private RegionExposeFrameCodec() {
    }

    /** Frame length for {@code rails} rkeys. */
    public static int length(int rails) {
        return RKEYS_OFFSET + 4 * rails;
    }

    /**
     * @return the frame length in bytes
     * @throws IllegalArgumentException if the length is not positive, the access has no known bit or an
     *                                  unknown one, or there is no rkey
     */
    public static int encode(MutableDirectBuffer b, int offset, int regionId, int credits, long address, long lengthBytes,
                             int access, int[] rkeys) {
        if (lengthBytes <= 0) {
            throw new IllegalArgumentException("lengthBytes > 0 required but it was " + lengthBytes);
        }
        if (access == 0 || (access & ~(ACCESS_READ | ACCESS_WRITE | ACCESS_ATOMIC)) != 0) {
            throw new IllegalArgumentException("access of READ (1), WRITE (2) and/or ATOMIC (4) required but it was " + access);
        }
        if (rkeys.length == 0 || rkeys.length > 0xFFFF) {
            throw new IllegalArgumentException("1 to 65535 rkeys required but there were " + rkeys.length);
        }
        int len = length(rkeys.length);
        FrameHeader.write(b, offset, FrameType.REGION_EXPOSE, 0, 0, regionId, credits, len - FrameHeader.LENGTH, 0);
        b.putLong(offset + ADDRESS_OFFSET, address, FrameHeader.ORDER);
        b.putLong(offset + LENGTH_OFFSET, lengthBytes, FrameHeader.ORDER);
        b.putShort(offset + ACCESS_OFFSET, (short) access, FrameHeader.ORDER);
        b.putShort(offset + RAILS_OFFSET, (short) rkeys.length, FrameHeader.ORDER);
        for (int i = 0; i < rkeys.length; i++) {
            b.putInt(offset + RKEYS_OFFSET + 4 * i, rkeys[i], FrameHeader.ORDER);
        }
        return len;
    }

    /**
     * Checks the payload: at least one rkey, the length the rail count says, a positive region length
     * and known access bits.
     *
     * @throws FrameFormatException naming the field at fault
     */
    public static void validatePayload(DirectBuffer b, int offset) {
        int payload = FrameHeader.payloadLength(b, offset);
        if (payload < RKEYS_OFFSET - FrameHeader.LENGTH + 4) {
            throw new FrameFormatException("REGION_EXPOSE frame carries " + payload + " payload bytes, fewer than one rkey needs ("
                + (RKEYS_OFFSET - FrameHeader.LENGTH + 4) + ")");
        }
        int rails = rails(b, offset);
        if (rails == 0 || payload != length(rails) - FrameHeader.LENGTH) {
            throw new FrameFormatException("REGION_EXPOSE frame says " + rails + " rails but carries " + payload + " payload bytes");
        }
        if (lengthBytes(b, offset) <= 0) {
            throw new FrameFormatException("REGION_EXPOSE frame exposes a region of " + lengthBytes(b, offset) + " bytes");
        }
        int access = access(b, offset);
        if (access == 0 || (access & ~(ACCESS_READ | ACCESS_WRITE | ACCESS_ATOMIC)) != 0) {
            throw new FrameFormatException("REGION_EXPOSE frame carries unknown access bits 0x" + Integer.toHexString(access));
        }
    }

    public static int regionId(DirectBuffer b, int offset) {
        return FrameHeader.psn(b, offset);
    }

    public static long address(DirectBuffer b, int offset) {
        return b.getLong(offset + ADDRESS_OFFSET, FrameHeader.ORDER);
    }

    public static long lengthBytes(DirectBuffer b, int offset) {
        return b.getLong(offset + LENGTH_OFFSET, FrameHeader.ORDER);
    }

    public static int access(DirectBuffer b, int offset) {
        return b.getShort(offset + ACCESS_OFFSET, FrameHeader.ORDER) & 0xFFFF;
    }

    public static int rails(DirectBuffer b, int offset) {
        return b.getShort(offset + RAILS_OFFSET, FrameHeader.ORDER) & 0xFFFF;
    }

    public static int rkey(DirectBuffer b, int offset, int rail) {
        return b.getInt(offset + RKEYS_OFFSET + 4 * rail, FrameHeader.ORDER);
    }
}
