package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaMessage;

import java.util.Arrays;

/**
 * The bytes of TCK message {@code seq}: its sequence number big-endian in the first four bytes (when
 * there are four) and a pattern that depends on the sequence number and the offset everywhere else, so a
 * message that arrives misplaced, truncated, padded, or with any byte changed is told from the one
 * expected. Checked by comparing every byte.
 */
public final class TckPayload {
    private TckPayload() {
    }

    public static byte[] bytes(int seq, int lengthBytes) {
        byte[] b = new byte[lengthBytes];
        for (int i = 0; i < lengthBytes; i++) {
            int x = seq * 0x9E3779B1 + i * 31 + (i >>> 8) * 131;
            b[i] = (byte) (x ^ (x >>> 13));
        }
        if (lengthBytes >= 4) {
            b[0] = (byte) (seq >>> 24);
            b[1] = (byte) (seq >>> 16);
            b[2] = (byte) (seq >>> 8);
            b[3] = (byte) seq;
        }
        return b;
    }

    public static RdmaMessage message(int seq, int lengthBytes) {
        return RdmaMessage.of(bytes(seq, lengthBytes));
    }

    /** Null when {@code m} holds exactly the bytes of {@code seq}, else what differs. */
    public static String mismatch(RdmaMessage m, int seq, int lengthBytes) {
        if (m.lengthBytes() != lengthBytes) {
            return "message " + seq + " (PSN " + m.psn() + "): " + m.lengthBytes() + " bytes, expected " + lengthBytes;
        }
        byte[] expected = bytes(seq, lengthBytes);
        byte[] got = m.toByteArray();
        int at = Arrays.mismatch(expected, got);
        return at < 0 ? null : "message " + seq + " (PSN " + m.psn() + "): byte " + at + " of " + lengthBytes + " is " + got[at]
            + ", expected " + expected[at];
    }
}
