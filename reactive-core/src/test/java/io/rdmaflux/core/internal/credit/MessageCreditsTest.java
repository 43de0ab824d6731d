package io.rdmaflux.core.internal.credit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MessageCreditsTest {
    @Test
    void grantsAreTheDemandCoveredByFreeBuffersOverAllRails() {
        MessageCredits c = new MessageCredits(4);
        assertEquals(0, c.grant(24), "no demand, no credit");
        c.onDemand(3);
        assertEquals(3, c.grant(24));
        assertEquals(0, c.grant(24), "granted once, not once per rail");
        c.onDemand(Long.MAX_VALUE);
        assertEquals(21, c.grant(24), "unbounded demand: the free buffers bound it");
    }

    @Test
    void arrivedUndeliveredMessagesUseTheirDemand() {
        MessageCredits c = new MessageCredits(1);
        c.onDemand(2);
        c.grant(10);
        c.takePending(100);
        assertTrue(c.onMessageArrived());
        c.onMessageQueued();
        assertEquals(0, c.grant(10), "one held by the peer, one waiting for delivery");
        c.onDelivered();
        assertEquals(0, c.grant(10), "the delivered message used its demand");
        c.onDemand(1);
        assertEquals(1, c.grant(10));
    }

    @Test
    void messagesPartWayInUseTheirDemandUntilTheyAreQueued() {
        MessageCredits c = new MessageCredits(1);
        c.onDemand(2);
        assertEquals(2, c.grant(10, 0));
        c.takePending(100);
        assertTrue(c.onMessageArrived(), "first fragment (or RTS) of message 0");
        assertEquals(0, c.grant(10, 1), "message 0 is part-way in: demand 2 = 1 held by the peer + 1 arriving");
        c.onMessageQueued();
        assertEquals(0, c.grant(10, 0), "message 0 whole, waiting for delivery");
        c.onDelivered();
        assertEquals(0, c.grant(10, 0));
        assertEquals(1, c.peerHolds(), "never more than the demand");
    }

    @Test
    void aMessageBeyondTheGrantedCreditsIsAViolationAndPendingCreditsDoNotCount() {
        MessageCredits c = new MessageCredits(1);
        assertFalse(c.onMessageArrived());
        c.onDemand(1);
        c.grant(4);
        assertFalse(c.onMessageArrived(), "the grant has not left yet");
        assertEquals(1, c.takePending(10));
        assertTrue(c.onMessageArrived());
    }

    @Test
    void explicitCreditWaitsForTheThresholdUnlessThePeerHasNone() {
        MessageCredits c = new MessageCredits(3);
        c.onDemand(1);
        c.grant(8);
        assertTrue(c.explicitCreditDue(), "the peer holds nothing else");
        c.takePending(5);
        c.onDemand(1);
        c.grant(8);
        assertFalse(c.explicitCreditDue(), "one pending, the peer still holds one");
        c.onDemand(2);
        c.grant(8);
        assertTrue(c.explicitCreditDue(), "three pending reach the threshold");
        assertEquals(2, c.takePending(2), "a frame carries at most its field's maximum");
        assertEquals(1, c.pending());
    }

    @Test
    void badValuesAreRejectedNamingThem() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new MessageCredits(0)).getMessage().contains("0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new MessageCredits(1).onDemand(-2)).getMessage().contains("-2"));
    }
}
