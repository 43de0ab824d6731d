package io.rdmaflux.striping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReceiveSequencerTest {
    private final List<Long> delivered = new ArrayList<>();

    @Test
    void deliversInPsnOrderOnceAllStripesLanded() {
        ReceiveSequencer r = new ReceiveSequencer(8);
        assertEquals(ReceiveSequencer.ACCEPTED, r.onStripe(1, 0, 100, 100));
        r.poll(delivered::add);
        assertTrue(delivered.isEmpty());
        r.onStripe(0, 500, 500, 1000);
        r.poll(delivered::add);
        assertTrue(delivered.isEmpty());
        r.onStripe(0, 0, 500, 1000);
        r.poll(delivered::add);
        assertEquals(List.of(0L, 1L), delivered);
        assertEquals(1, r.outOfOrderArrivals());
        assertEquals(2, r.esn());
    }

    @Test
    void overlappingAndRepeatedStripesCountOnce() {
        ReceiveSequencer r = new ReceiveSequencer(8);
        r.onStripe(0, 0, 600, 1000);
        r.onStripe(0, 400, 300, 1000);
        r.poll(delivered::add);
        assertTrue(delivered.isEmpty(), "700 of 1000 bytes covered");
        r.onStripe(0, 650, 350, 1000);
        r.poll(delivered::add);
        assertEquals(List.of(0L), delivered);
        assertEquals(ReceiveSequencer.DUPLICATE, r.onStripe(0, 0, 1000, 1000));
        assertEquals(1, r.duplicates());
    }

    @Test
    void aCompleteMessageWaitingForAnEarlierOneDropsCopies() {
        ReceiveSequencer r = new ReceiveSequencer(8);
        r.onStripe(1, 0, 10, 10);
        assertEquals(ReceiveSequencer.DUPLICATE, r.onStripe(1, 0, 10, 10));
    }

    @Test
    void zeroLengthMessagesAreDeliveredAndTheWindowIsEnforced() {
        ReceiveSequencer r = new ReceiveSequencer(2);
        r.onStripe(0, 0, 0, 0);
        r.poll(delivered::add);
        assertEquals(List.of(0L), delivered);
        assertEquals(ReceiveSequencer.WINDOW_OVERFLOW, r.onStripe(3, 0, 1, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> r.onStripe(1, 5, 10, 12));
        assertTrue(e.getMessage().contains("[5, 15) lies outside message 1 of 12 bytes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new ReceiveSequencer(0));
        assertTrue(e.getMessage().contains("was 0"), e.getMessage());
    }
}
