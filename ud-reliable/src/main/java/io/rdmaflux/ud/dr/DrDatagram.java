package io.rdmaflux.ud.dr;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The codec of DR datagrams: one 28-byte header, then the payload. Little-endian, like every rdmaflux frame.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |        CRC32C over bytes [4, 28 + payload length)             |  0
 * +---------------+---------------+-------------------------------+
 * |  type 11..13  |     flags     |      payload length (u16)     |  4
 * +---------------+---------------+-------------------------------+
 * |                  source id (the sending endpoint)             |  8
 * +---------------------------------------------------------------+
 * | PSN: DATA its VFRAG's PSN; ACK the cumulative PSN (ESN); PROBE |  12
 * +---------------------------------------------------------------+
 * | word A: DATA message length; ACK credit limit PSN; PROBE rail  |  16
 * +---------------------------------------------------------------+
 * | word B (64): ACK SACK bitmap, bit i = PSN ESN+1+i held;        |  20
 * |              PROBE its send time (echoed by the reply), ns     |
 * +---------------------------------------------------------------+
 * | payload ...                                                   |  28
 * </pre>
 *
 * <p>Types use the codes reserved for ud-reliable in the shared FrameType space: {@link #DATA} 11,
 * {@link #ACK} 12, {@link #PROBE} 13 (14 is reserved). The CRC32C ({@code java.util.zip.CRC32C}) covers the
 * header after the CRC field and the payload, end to end (seed 003 &sect;3.1: DR checksums data "once it
 * reaches main memory", catching what the transport's own checks do not).
 *
 * <p>{@link #decode} fills this object's fields; one instance per endpoint, reused. Not thread-safe.
 */
public final class DrDatagram {
    public static final int HEADER_BYTES = 28;
    public static final int DATA = 11;
    public static final int ACK = 12;
    public static final int PROBE = 13;

    /** DATA: the first VFRAG of a message. */
    public static final int FLAG_FIRST = 0x1;
    /** DATA: the last VFRAG of a message. */
    public static final int FLAG_LAST = 0x2;
    /** DATA: end of stream; no payload, no message. */
    public static final int FLAG_FIN = 0x4;
    /** DATA: a retransmission (informational). */
    public static final int FLAG_RETRANSMIT = 0x8;
    /** ACK: the answer to a PROBE; word B echoes the probe's send time. */
    public static final int FLAG_PROBE_REPLY = 0x1;

    /** {@link #decode} results. */
    public static final int OK = 0;
    public static final int TRUNCATED = 1;
    public static final int BAD_CRC = 2;
    public static final int FOREIGN = 3;

    static final int CRC_OFFSET = 0;
    static final int TYPE_OFFSET = 4;
    static final int FLAGS_OFFSET = 5;
    static final int LENGTH_OFFSET = 6;
    static final int SOURCE_OFFSET = 8;
    static final int PSN_OFFSET = 12;
    static final int WORD_A_OFFSET = 16;
    static final int WORD_B_OFFSET = 20;
    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    private final CRC32C crc = new CRC32C();
    private byte[] scratch = new byte[0];

    public int type;
    public int flags;
    public int payloadLength;
    public int sourceId;
    public int psn;
    public int wordA;
    public long wordB;
    /** Offset of the payload in the decoded buffer. */
    public int payloadOffset;

    /**
     * Writes a header at {@code offset} of {@code dst} and the CRC over it and the {@code payloadLength} bytes
     * already at {@code offset + HEADER_BYTES}.
     *
     * @return the datagram's length, bytes
     */
    public static int encode(MutableDirectBuffer dst, int offset, int type, int flags, int payloadLength, int sourceId, int psn,
                             int wordA, long wordB, CRC32C crc) {
        if (payloadLength < 0 || payloadLength > 0xFFFF) {
            throw new IllegalArgumentException("payloadLength in [0, 65535] required but it was " + payloadLength);
        }
        dst.putByte(offset + TYPE_OFFSET, (byte) type);
        dst.putByte(offset + FLAGS_OFFSET, (byte) flags);
        dst.putShort(offset + LENGTH_OFFSET, (short) payloadLength, ORDER);
        dst.putInt(offset + SOURCE_OFFSET, sourceId, ORDER);
        dst.putInt(offset + PSN_OFFSET, psn, ORDER);
        dst.putInt(offset + WORD_A_OFFSET, wordA, ORDER);
        dst.putLong(offset + WORD_B_OFFSET, wordB, ORDER);
        int length = HEADER_BYTES + payloadLength;
        dst.putInt(offset + CRC_OFFSET, crc(dst, offset + 4, length - 4, crc, null), ORDER);
        return length;
    }

    /**
     * Decodes the datagram of {@code length} bytes at {@code offset}: checks its length, type and CRC32C and
     * fills the public fields.
     *
     * @return {@link #OK}, or {@link #TRUNCATED} (shorter than its header says), {@link #BAD_CRC} (corrupted),
     *     {@link #FOREIGN} (not a DR datagram: unknown type); the fields are meaningful only on OK
     */
    public int decode(DirectBuffer src, int offset, int length) {
        if (length < HEADER_BYTES) {
            return TRUNCATED;
        }
        int payload = src.getShort(offset + LENGTH_OFFSET, ORDER) & 0xFFFF;
        if (HEADER_BYTES + payload > length) {
            return TRUNCATED;
        }
        int expected = src.getInt(offset + CRC_OFFSET, ORDER);
        byte[] s = scratch;
        if (s.length < HEADER_BYTES + payload) {
            s = scratch = new byte[HEADER_BYTES + payload];
        }
        if (crc(src, offset + 4, HEADER_BYTES + payload - 4, crc, s) != expected) {
            return BAD_CRC;
        }
        int t = src.getByte(offset + TYPE_OFFSET) & 0xFF;
        if (t != DATA && t != ACK && t != PROBE) {
            return FOREIGN;
        }
        type = t;
        flags = src.getByte(offset + FLAGS_OFFSET) & 0xFF;
        payloadLength = payload;
        sourceId = src.getInt(offset + SOURCE_OFFSET, ORDER);
        psn = src.getInt(offset + PSN_OFFSET, ORDER);
        wordA = src.getInt(offset + WORD_A_OFFSET, ORDER);
        wordB = src.getLong(offset + WORD_B_OFFSET, ORDER);
        payloadOffset = offset + HEADER_BYTES;
        return OK;
    }

    /** A name for a {@link #decode} result. */
    public static String resultName(int result) {
        return switch (result) {
            case OK -> "OK";
            case TRUNCATED -> "TRUNCATED";
            case BAD_CRC -> "BAD_CRC";
            case FOREIGN -> "FOREIGN";
            default -> "result " + result;
        };
    }

    private static int crc(DirectBuffer b, int offset, int length, CRC32C crc, byte[] scratch) {
        crc.reset();
        byte[] array = b.byteArray();
        if (array != null) {
            crc.update(array, b.wrapAdjustment() + offset, length);
        } else {
            ByteBuffer bb = b.byteBuffer();
            if (bb != null) {
                ByteBuffer d = bb.duplicate();
                int base = b.wrapAdjustment();
                d.limit(base + offset + length).position(base + offset);
                crc.update(d);
            } else {
                byte[] tmp = scratch != null && scratch.length >= length ? scratch : new byte[length];
                b.getBytes(offset, tmp, 0, length);
                crc.update(tmp, 0, length);
            }
        }
        return (int) crc.getValue();
    }
}
