package io.rdmaflux.ud.dr;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

/** A delivered message's array handed back is reused for the next message of its length, and only then. */
class ReceiveWindowRecycleTest {
    private static final DrConfig CONFIG = DrConfig.builder().datagramBytes(2048).receiveBufferVfrags(64).initialCreditVfrags(64).build();

    private static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 7 + seed);
        }
        return b;
    }

    /** Delivers {@code message} as in-order VFRAGs from {@code psn}; @return the next PSN */
    private static int deliver(ReceiveWindow w, int psn, byte[] message) {
        int chunk = CONFIG.vfragPayloadBytes();
        for (int at = 0; at < message.length; at += chunk) {
            int n = Math.min(chunk, message.length - at);
            int flags = (at == 0 ? DrDatagram.FLAG_FIRST : 0) | (at + n == message.length ? DrDatagram.FLAG_LAST : 0);
            w.accept(psn++, flags, message.length, new UnsafeBuffer(message), at, n);
        }
        return psn;
    }

    @Test
    void aRecycledArrayCarriesTheNextMessageOfItsLengthOnly() {
        ReceiveWindow w = new ReceiveWindow(CONFIG);
        int psn = CONFIG.firstPsn();
        byte[] first = pattern(10_000, 1);
        psn = deliver(w, psn, first);
        byte[] got1 = w.poll();
        assertArrayEquals(first, got1);
        w.recycle(got1);
        byte[] other = pattern(9_999, 2);
        psn = deliver(w, psn, other);
        byte[] got2 = w.poll();
        assertNotSame(got1, got2, "another length: a fresh array");
        assertArrayEquals(other, got2);
        byte[] third = pattern(10_000, 3);
        deliver(w, psn, third);
        byte[] got3 = w.poll();
        assertSame(got1, got3, "the same length: the recycled array");
        assertArrayEquals(third, got3, "overwritten whole: " + Arrays.mismatch(third, got3));
    }
}
