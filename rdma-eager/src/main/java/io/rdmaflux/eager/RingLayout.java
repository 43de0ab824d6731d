package io.rdmaflux.eager;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The layout of one eager ring slot (seed 001 &sect;4.2: "head flag + size + payload + tail flag"),
 * little-endian, written by one RDMA WRITE from the sender's staging slot to the receiver's ring slot:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |   head flag   |  slot flags   |            0                  |  0
 * +---------------+---------------+-------------------------------+
 * |             frame length (bytes, header included)             |  4
 * +---------------------------------------------------------------+
 * |              sequence number (low 32 bits)                    |  8
 * +---------------------------------------------------------------+
 * |   piggybacked credit: the writer's own ring freed to (low 32) | 12
 * +---------------------------------------------------------------+
 * |      CRC32C of bytes 0..15 and the frame (CRC flag), else 0   | 16
 * +---------------------------------------------------------------+
 * |                             0                                 | 20
 * +---------------------------------------------------------------+
 * |   the frame: exactly the bytes the RC channel would SEND      | 24
 * |   (FrameHeader + payload), zero padding to a multiple of 8    |
 * +---------------------------------------------------------------+
 * |              sequence number (low 32 bits)                    | 24 + pad8(length)
 * +---------------+-----------------------------------------------+
 * |   tail flag   |                      0                        |
 * +---------------+-----------------------------------------------+
 * </pre>
 *
 * <h2>Arrival and ABA</h2>
 * The receiver expects sequence number {@code s} in slot {@code s mod slots}. The flags of lap
 * {@code s / slots} alternate ({@link #flag}: {@code 0xA5} on even laps, {@code 0x5A} on odd ones), so a
 * slot is never cleared before reuse: the message of the previous lap has the other flag. A slot holds
 * only what was written into it, and its contents of two laps ago have the same flag: that is the ABA
 * case, and the sequence number in the head and in the tail word rules it out &mdash; arrival needs head
 * flag, head sequence, tail flag and tail sequence all of lap {@code s}, where the tail word sits where
 * the head's length says. A stale tail at that position carries an older sequence (the 32-bit sequence
 * recurs in a slot only after 2^32 writes).
 *
 * <h2>Tail ordering</h2>
 * The tail word is the WRITE's last 8 bytes, 8-byte aligned (slots and frames are padded to 8). Where
 * the receiving port places a WRITE's last 8 bytes after the rest
 * ({@code io.rdmaflux.verbs.Port#orderedWritePlacement()}: the soft provider, which copies the rest,
 * fences, then writes the last word), seeing the tail with acquire semantics proves the slot complete.
 * Where it does not (a port with torn writes, a provider that does not vouch for it: DiSNI and UCX report
 * false, since PCIe relaxed ordering or a multi-packet WRITE may place bytes out of order), the slot also
 * carries a CRC32C over its head and frame ({@link #FLAG_CRC}); a slot whose tail arrived before the rest
 * fails the check and is read again on the next poll, so a torn message is never delivered.
 *
 * <p><b>Concurrency:</b> static pure functions.
 */
final class RingLayout {
    static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
    static final int HEAD_FLAG_OFFSET = 0;
    static final int SLOT_FLAGS_OFFSET = 1;
    static final int LENGTH_OFFSET = 4;
    static final int SEQ_OFFSET = 8;
    static final int CREDIT_OFFSET = 12;
    static final int CRC_OFFSET = 16;
    /** Bytes before the frame. */
    static final int HEAD = 24;
    /** The tail word. */
    static final int TAIL = 8;
    /** Slot bytes beyond the padded frame. */
    static final int OVERHEAD = HEAD + TAIL;
    /** Slot flag: the CRC field is valid and must be checked. */
    static final int FLAG_CRC = 0x1;
    static final byte EVEN_LAP = (byte) 0xA5;
    static final byte ODD_LAP = (byte) 0x5A;

    private static final ThreadLocal<CRC32C> CRC = ThreadLocal.withInitial(CRC32C::new);
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[4096]);

    private RingLayout() {
    }

    /** {@code n} rounded up to a multiple of 8. */
    static int pad8(int n) {
        return (n + 7) & ~7;
    }

    /** Bytes of a slot that holds frames of up to {@code frameBytes}. */
    static int slotBytesFor(int frameBytes) {
        return pad8(frameBytes) + OVERHEAD;
    }

    /** The largest frame a slot of {@code slotBytes} holds. */
    static int frameCapacity(int slotBytes) {
        return slotBytes - OVERHEAD;
    }

    /** Bytes one WRITE of a frame of {@code frameLength} bytes carries. */
    static int writeLength(int frameLength) {
        return HEAD + pad8(frameLength) + TAIL;
    }

    /** The head and tail flag of sequence number {@code seq} in a ring of {@code slots}. */
    static byte flag(long seq, int slots) {
        return ((seq / slots) & 1) == 0 ? EVEN_LAP : ODD_LAP;
    }

    /**
     * Completes a staged slot at {@code base} whose frame of {@code frameLength} bytes is in place at
     * {@code base + HEAD}: head, padding, optional CRC, tail. The head goes as three 8-byte stores and the
     * padding as at most one (the slot and frame offsets are 8-byte aligned).
     *
     * @param flag the lap flag of {@code seq} ({@link #flag}; the sender keeps it incrementally)
     * @return the WRITE's length in bytes
     */
    static int seal(MutableDirectBuffer b, int base, int frameLength, long seq, byte flag, int creditLow32, boolean crc) {
        int padded = pad8(frameLength);
        if (padded != frameLength) {
            // zero the pad bytes: the 8-byte word they end, its frame bytes kept
            int word = base + HEAD + padded - 8;
            int keep = frameLength - (padded - 8);
            long mask = keep == 0 ? 0 : (ORDER == java.nio.ByteOrder.nativeOrder() ? -1L >>> (64 - 8 * keep) : -1L << (64 - 8 * keep));
            b.putLong(word, b.getLong(word) & mask);
        }
        // bytes 0..7: head flag, slot flags, 0, 0, frame length (little-endian)
        b.putLong(base, (flag & 0xFFL) | (long) (crc ? FLAG_CRC : 0) << 8 | (long) frameLength << 32, ORDER);
        b.putLong(base + SEQ_OFFSET, (seq & 0xFFFFFFFFL) | (long) creditLow32 << 32, ORDER);
        b.putLong(base + CRC_OFFSET, crc ? crc(b, base, frameLength) & 0xFFFFFFFFL : 0L, ORDER);
        int tail = base + HEAD + padded;
        // native order, as the reader takes it with one volatile load (RDMA hosts of one ring share it in practice)
        b.putLong(tail, tailWord(seq, flag));
        return HEAD + padded + TAIL;
    }

    static long tailWord(long seq, byte flag) {
        return (seq & 0xFFFFFFFFL) | ((long) (flag & 0xFF) << 32);
    }

    /** CRC32C of the head's first 16 bytes and the frame (copied through a per-thread scratch array). */
    static int crc(DirectBuffer b, int base, int frameLength) {
        CRC32C c = CRC.get();
        c.reset();
        byte[] tmp = SCRATCH.get();
        if (tmp.length < 16 + frameLength) {
            tmp = new byte[Math.max(16 + frameLength, tmp.length * 2)];
            SCRATCH.set(tmp);
        }
        b.getBytes(base, tmp, 0, 16);
        b.getBytes(base + HEAD, tmp, 16, frameLength);
        c.update(tmp, 0, 16 + frameLength);
        return (int) c.getValue();
    }

}
