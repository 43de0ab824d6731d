package io.rdmaflux.core.stripe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RecordedMessageTimingsTest {
    @Test
    void recordsStripesDeliveriesAndCompletionPerRail() {
        RecordedMessageTimings t = new RecordedMessageTimings(3);
        t.reset(3000);
        t.addStripe(0, 1000);
        t.addStripe(2, 1500);
        t.addStripe(2, 500);
        t.addDelivery(0, 400);
        t.addDelivery(2, 300);
        t.addDelivery(2, 200);
        t.completed(9_000);

        assertEquals(3000, t.lengthBytes());
        assertEquals(0b101, t.railsUsed());
        assertEquals(1000, t.stripeBytes(0));
        assertEquals(0, t.stripeBytes(1));
        assertEquals(2000, t.stripeBytes(2));
        assertEquals(400, t.deliveryTimeNs(0));
        assertEquals(500, t.deliveryTimeNs(2), "delivery times of a rail's stripes add up");
        assertEquals(9_000, t.completedNs());
        assertFalse(t.resent());
        assertFalse(t.censored());
    }

    @Test
    void aNonPositiveDeliveryAddsNothingAndTimesAreAtLeastOneNanosecond() {
        RecordedMessageTimings t = new RecordedMessageTimings(1);
        t.reset(10);
        t.addStripe(0, 10);
        t.addDelivery(0, -50);
        t.addDelivery(0, 0);
        assertEquals(1, t.deliveryTimeNs(0));
        t.addDelivery(0, 7);
        assertEquals(7, t.deliveryTimeNs(0));
    }

    @Test
    void aResentStripeLeavesItsRailAndMarksTheMessage() {
        RecordedMessageTimings t = new RecordedMessageTimings(2);
        t.reset(200);
        t.addStripe(0, 100);
        t.addStripe(1, 100);
        t.stripeResent(1, 100);
        t.addStripe(0, 100);
        assertEquals(200, t.stripeBytes(0));
        assertEquals(0, t.stripeBytes(1));
        assertTrue(t.resent());
    }

    @Test
    void resetForgetsTheLastMessageCompletely() {
        RecordedMessageTimings t = new RecordedMessageTimings(2);
        t.reset(100);
        t.addStripe(1, 100);
        t.addDelivery(1, 90);
        t.stripeResent(1, 50);
        t.censor();
        t.completed(5);

        t.reset(64);

        assertEquals(64, t.lengthBytes());
        assertEquals(0, t.railsUsed());
        assertEquals(0, t.stripeBytes(1));
        assertEquals(1, t.deliveryTimeNs(1));
        assertEquals(0, t.completedNs());
        assertFalse(t.resent());
        assertFalse(t.censored());
    }

    @Test
    void aRailCountOutsideOneToSixtyFourIsRejectedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RecordedMessageTimings(0));
        assertTrue(e.getMessage().contains("railCount") && e.getMessage().contains("0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new RecordedMessageTimings(65));
        assertTrue(e.getMessage().contains("65"), e.getMessage());
    }
}
