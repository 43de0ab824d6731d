package io.rdmaflux.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The in-flight ledger starts small and grows by doubling only while more PSNs are in flight at once. */
class InflightLedgerTest {
    @Test
    void staysSmallWhileFewPsnsAreInFlight() {
        InflightLedger ledger = new InflightLedger(4096);
        assertEquals(InflightLedger.INITIAL_RING, ledger.ringSize());
        for (int psn = 0; psn < 10_000; psn++) {
            ledger.start(psn, 100, psn);
            if (psn >= 3) {
                // four in flight, completed in turn
                assertEquals(100, ledger.length(psn - 3));
                ledger.completed(psn - 3);
            }
        }
        assertEquals(InflightLedger.INITIAL_RING, ledger.ringSize());
    }

    @Test
    void growsByDoublingKeepingEveryEntryInFlight() {
        InflightLedger ledger = new InflightLedger(200);
        RdmaMessage[] kept = new RdmaMessage[100];
        // PSNs from near the int wrap-around, so the rehash is checked across it
        int first = Integer.MAX_VALUE - 40;
        for (int i = 0; i < 100; i++) {
            int psn = first + i;
            ledger.start(psn, i, 1_000L * i);
            if (i % 3 == 0) {
                kept[i] = RdmaMessage.of("m" + i);
                assertTrue(ledger.isFree(psn));
                ledger.keep(psn, kept[i], i % 2);
            }
        }
        assertEquals(128, ledger.ringSize(), "doubled from 8 until 100 PSNs fit");
        for (int i = 0; i < 100; i++) {
            int psn = first + i;
            assertEquals(i, ledger.length(psn));
            assertEquals(5_000_000L - 1_000L * i, ledger.elapsedNs(psn, 5_000_000L));
            if (kept[i] != null) {
                assertSame(kept[i], ledger.kept(psn));
            } else {
                assertNull(ledger.kept(psn));
            }
        }
        // out of order completions, then more in flight than the capacity: the ring stops at its largest
        // size (256 for a capacity of 200) and wraps there, as a ring of that size always did
        for (int i = 99; i >= 0; i--) {
            ledger.completed(first + i);
            if (kept[i] != null) {
                assertTrue(ledger.retire(first + i));
                assertEquals(0, kept[i].refCnt(), "a retired message is released");
            }
        }
        for (int psn = first + 100; psn != first + 1100; psn++) {
            ledger.start(psn, 1, 0);
        }
        assertEquals(256, ledger.ringSize(), "at most the ring for its capacity, as before: entries wrap there");
        ledger.releaseAll();
    }

    @Test
    void keptMessagesListedForResendSurviveAGrowth() {
        InflightLedger ledger = new InflightLedger(64);
        RdmaMessage a = RdmaMessage.of("a");
        RdmaMessage b = RdmaMessage.of("b");
        ledger.start(0, 1, 0);
        ledger.keep(0, a, 1);
        ledger.start(1, 1, 0);
        ledger.keep(1, b, 0);
        ledger.resendAllOf(1, 2);
        for (int psn = 2; psn < 40; psn++) {
            ledger.start(psn, 1, 0);
        }
        assertTrue(ledger.ringSize() >= 64);
        assertEquals(1, ledger.resendCount());
        assertEquals(0, ledger.nextResend());
        assertSame(a, ledger.kept(0));
        assertSame(b, ledger.kept(1));
        ledger.releaseAll();
        assertEquals(0, a.refCnt());
        assertEquals(0, b.refCnt());
    }

    @Test
    void anInitialRingThatIsNotAPowerOfTwoIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new InflightLedger(64, 6));
        assertTrue(e.getMessage().contains("6"), e.getMessage());
    }
}
