package io.rdmaflux.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The receive-side rendezvous table starts with a few entries and doubles up to the reorder window. */
class RendezvousReceivesTest {
    @Test
    void growsKeepingEveryEntryInProgress() {
        RendezvousReceives t = new RendezvousReceives(128);
        assertEquals(RendezvousReceives.INITIAL_ENTRIES, t.state.length);
        int first = Integer.MAX_VALUE - 10;
        for (int k = 0; k < 40; k++) {
            t.addPending(first + k, k % 3, 1000 + k);
            if (k % 2 == 0) {
                t.grant(t.index(first + k), k);
            }
        }
        assertEquals(64, t.state.length, "doubled until 40 entries fit");
        assertEquals(20, t.pending);
        assertEquals(20, t.granted);
        for (int k = 0; k < 40; k++) {
            int i = t.index(first + k);
            assertTrue(t.has(first + k));
            assertEquals(k % 3, t.rail[i]);
            assertEquals(1000 + k, t.length[i]);
            assertEquals(k % 2 == 0 ? RendezvousReceives.GRANTED : RendezvousReceives.PENDING, t.state[i]);
        }
        assertFalse(t.has(first + 40));
    }

    @Test
    void owedFinsAndDiscardsGrowInOrderUpToTheirLimits() {
        RendezvousReceives t = new RendezvousReceives(16);
        for (int k = 0; k < 3; k++) {
            assertTrue(t.oweFin(k, 10, 0, 0));
            t.finSent();
        }
        // the ring's head is not at 0 now: growing must keep the order
        for (int k = 0; k < RendezvousReceives.MAX_FINS_OWED; k++) {
            assertTrue(t.oweFin(100 + k, 10, 0, 0), "fin " + k);
        }
        assertFalse(t.oweFin(9999, 10, 0, 0), "at most " + RendezvousReceives.MAX_FINS_OWED + " owed");
        for (int k = 0; k < RendezvousReceives.MAX_FINS_OWED; k++) {
            assertEquals(100 + k, t.nextFinPsn());
            t.finSent();
        }
        for (int k = 0; k < RendezvousReceives.MAX_DISCARDS_OWED; k++) {
            assertTrue(t.oweDiscard(k, 1, 0));
        }
        assertFalse(t.oweDiscard(99, 1, 0));
        assertEquals(RendezvousReceives.MAX_DISCARDS_OWED - 1, t.discardPsn(RendezvousReceives.MAX_DISCARDS_OWED - 1));
    }
}
