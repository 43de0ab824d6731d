package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaMessage;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * The soak's messages, all big-endian:
 *
 * <pre>
 * sender -> receiver: DATA    | magic 'RSD1' (4) | sequence number (8) | payload length (4) | payload | CRC32C of all before (4) |
 * sender -> receiver: END     | magic 'RSE1' (4) | first sequence of the epoch (8) | messages of the epoch (8) | last epoch (1) |
 * receiver -> sender: VERDICT | magic 'RSV1' (4) | messages verified (8) | messages wrong (8) | bytes verified (8) |
 * </pre>
 *
 * A DATA message's payload length and bytes are a function of its sequence number and the run's
 * seed ({@link #data}), so the sender needs no state and a size mix (64 B .. {@code maxBytes}) crosses
 * the eager/rendezvous boundary. The receiver ({@link #check}) verifies every byte: the CRC32C
 * (java.util.zip.CRC32C, Castagnoli) over header and payload, and the sequence number against the
 * one it expects (so a lost, duplicated or reordered message is caught too).
 *
 * <p>Stateless and thread-safe.
 */
final class SoakWire {
    static final int DATA_MAGIC = 0x52534431;
    static final int END_MAGIC = 0x52534531;
    static final int VERDICT_MAGIC = 0x52535631;
    /** Header (magic, sequence, length) plus the CRC trailer, bytes. */
    static final int OVERHEAD_BYTES = 20;
    static final int MIN_PAYLOAD_BYTES = 44;

    private SoakWire() {
    }

    /** Payload bytes of message {@code seq} for a run with {@code seed}, in [44, maxBytes - 20]. */
    static int payloadBytes(long seq, long seed, int maxBytes) {
        int span = maxBytes - OVERHEAD_BYTES - MIN_PAYLOAD_BYTES + 1;
        return MIN_PAYLOAD_BYTES + (int) Long.remainderUnsigned(mix(seq ^ seed), span);
    }

    /**
     * Encodes DATA message {@code seq}.
     *
     * @throws UserError if {@code maxBytes} is below 64 (the smallest message)
     */
    static byte[] data(long seq, long seed, int maxBytes) {
        if (maxBytes < OVERHEAD_BYTES + MIN_PAYLOAD_BYTES) {
            throw new UserError("--max-message-bytes must be at least " + (OVERHEAD_BYTES + MIN_PAYLOAD_BYTES) + " but it was " + maxBytes);
        }
        int n = payloadBytes(seq, seed, maxBytes);
        byte[] out = new byte[OVERHEAD_BYTES + n];
        ByteBuffer b = ByteBuffer.wrap(out).order(ByteOrder.BIG_ENDIAN);
        b.putInt(DATA_MAGIC).putLong(seq).putInt(n);
        SplittableRandom r = new SplittableRandom(mix(seq) ^ seed);
        int i = 16;
        for (; i + 8 <= 16 + n; i += 8) {
            b.putLong(i, r.nextLong());
        }
        for (; i < 16 + n; i++) {
            out[i] = (byte) r.nextInt();
        }
        CRC32C crc = new CRC32C();
        crc.update(out, 0, 16 + n);
        b.putInt(16 + n, (int) crc.getValue());
        return out;
    }

    /**
     * Checks a received DATA message held in {@code bytes[0, len)}.
     *
     * @return null when it is message {@code expectedSeq} with a CRC32C that matches, else one line
     *         saying what is wrong (for the report)
     */
    static @Nullable String check(byte[] bytes, int len, long expectedSeq) {
        if (len < OVERHEAD_BYTES) {
            return "message " + expectedSeq + ": " + len + " bytes, shorter than a soak header (" + OVERHEAD_BYTES + ")";
        }
        ByteBuffer b = ByteBuffer.wrap(bytes, 0, len).order(ByteOrder.BIG_ENDIAN);
        if (b.getInt(0) != DATA_MAGIC) {
            return "message " + expectedSeq + ": not a soak DATA message (magic " + Integer.toHexString(b.getInt(0)) + ")";
        }
        int n = b.getInt(12);
        if (n != len - OVERHEAD_BYTES) {
            return "message " + expectedSeq + ": length field " + n + " but " + (len - OVERHEAD_BYTES) + " payload bytes arrived";
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, 16 + n);
        int want = b.getInt(16 + n);
        if ((int) crc.getValue() != want) {
            return "message " + expectedSeq + ": CRC32C " + Integer.toHexString((int) crc.getValue()) + " but the sender's is "
                + Integer.toHexString(want) + " (a byte changed)";
        }
        long seq = b.getLong(4);
        if (seq != expectedSeq) {
            return "expected message " + expectedSeq + " but got " + seq + (seq < expectedSeq ? " (duplicate or reordered)" : " (lost messages)");
        }
        return null;
    }

    static RdmaMessage end(long firstSeq, long count, boolean last) {
        return RdmaMessage.of(ByteBuffer.allocate(21).putInt(END_MAGIC).putLong(firstSeq).putLong(count).put((byte) (last ? 1 : 0)).array());
    }

    /** Whether {@code m} is an END message (else it is DATA). */
    static boolean isEnd(RdmaMessage m) {
        return m.lengthBytes() == 21 && m.content().getInt(0, ByteOrder.BIG_ENDIAN) == END_MAGIC;
    }

    /** The message count an END message announces. */
    static long endCount(RdmaMessage m) {
        return m.content().getLong(12, ByteOrder.BIG_ENDIAN);
    }

    /** Whether an END message closes the last epoch (the run). */
    static boolean endIsLast(RdmaMessage m) {
        return m.content().getByte(20) == 1;
    }

    /** The receiver's answer for one epoch. */
    record Verdict(long verified, long wrong, long bytes) {
        RdmaMessage encode() {
            return RdmaMessage.of(ByteBuffer.allocate(28).putInt(VERDICT_MAGIC).putLong(verified).putLong(wrong).putLong(bytes).array());
        }

        /** @throws UserError if {@code m} is not a verdict */
        static Verdict decode(RdmaMessage m) {
            DirectBuffer c = m.content();
            if (m.lengthBytes() != 28 || c.getInt(0, ByteOrder.BIG_ENDIAN) != VERDICT_MAGIC) {
                throw new UserError("the soak receiver answered with a message of " + m.lengthBytes() + " bytes that is not a verdict");
            }
            return new Verdict(c.getLong(4, ByteOrder.BIG_ENDIAN), c.getLong(12, ByteOrder.BIG_ENDIAN), c.getLong(20, ByteOrder.BIG_ENDIAN));
        }
    }

    /** SplitMix64's finalizer: spreads a sequence number over 64 bits. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
