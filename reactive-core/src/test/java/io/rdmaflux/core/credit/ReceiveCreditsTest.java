package io.rdmaflux.core.credit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReceiveCreditsTest {
    @Test
    void noDemandGrantsNoCredit() {
        ReceiveCredits c = new ReceiveCredits(8, 2);
        assertEquals(0, c.grant());
        assertFalse(c.explicitCreditDue());
    }

    @Test
    void creditsAreFreeBuffersCoveredByDemand() {
        ReceiveCredits c = new ReceiveCredits(8, 4);
        c.onDemand(3);
        assertEquals(3, c.grant());
        c.onDemand(Long.MAX_VALUE);
        assertEquals(5, c.grant());
        assertEquals(8, c.peerHolds());
        assertEquals(0, c.grant());
    }

    @Test
    void heldMessagesHoldCreditsUntilReleasedInAnyOrder() {
        ReceiveCredits c = new ReceiveCredits(4, 1);
        c.onDemand(Long.MAX_VALUE);
        assertEquals(4, c.grant());
        c.takePending();
        for (int i = 0; i < 4; i++) {
            assertTrue(c.onDataArrived());
            c.onDelivered();
        }
        assertEquals(0, c.grant());
        c.onBufferFreed();
        assertEquals(1, c.grant());
        c.onBufferFreed();
        c.onBufferFreed();
        assertEquals(2, c.grant());
        assertEquals(1, c.held());
    }

    @Test
    void explicitCreditWaitsForThresholdUnlessPeerHasNone() {
        ReceiveCredits c = new ReceiveCredits(16, 4);
        c.onDemand(1);
        c.grant();
        assertTrue(c.explicitCreditDue(), "peer holds nothing else: must not wait for the threshold");
        c.takePending();
        c.onDemand(2);
        c.grant();
        assertFalse(c.explicitCreditDue(), "peer still holds 1 credit and 2 < threshold 4");
        c.onDemand(2);
        c.grant();
        assertTrue(c.explicitCreditDue(), "4 pending reach the threshold");
        assertEquals(4, c.takePending());
        assertFalse(c.explicitCreditDue());
    }

    @Test
    void dataBeyondGrantedCreditIsAViolation() {
        ReceiveCredits c = new ReceiveCredits(4, 1);
        assertFalse(c.onDataArrived());
        c.onDemand(1);
        c.grant();
        assertFalse(c.onDataArrived(), "a credit not yet sent to the peer cannot be used by it");
        c.takePending();
        assertTrue(c.onDataArrived());
        assertFalse(c.onDataArrived());
    }

    @Test
    void demandOfOneStreamsAFragmentedMessageOneCreditAtATime() {
        ReceiveCredits c = new ReceiveCredits(4, 1);
        c.onDemand(1);
        for (int frag = 0; frag < 10; frag++) {
            assertEquals(1, c.grant());
            c.takePending();
            assertTrue(c.onDataArrived());
            c.onBufferFreed();
        }
        c.onDelivered();
        assertEquals(0, c.grant());
        assertEquals(0, c.demand());
    }

    @Test
    void arrivedButUndeliveredMessagesUseUpTheirDemand() {
        ReceiveCredits c = new ReceiveCredits(8, 1);
        c.onDemand(5);
        assertEquals(5, c.grant());
        c.takePending();
        for (int i = 0; i < 5; i++) {
            assertTrue(c.onDataArrived());
            c.onMessageQueued();
            c.onBufferFreed();
        }
        assertEquals(0, c.grant(), "five messages wait for delivery: demand 5 is used up");
        for (int i = 0; i < 5; i++) {
            c.onDelivered();
        }
        assertEquals(0, c.grant());
        c.onDemand(2);
        assertEquals(2, c.grant());
    }

    @Test
    void constructorAndDemandRejectBadValues() {
        assertThrows(IllegalArgumentException.class, () -> new ReceiveCredits(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new ReceiveCredits(4, 5));
        assertThrows(IllegalArgumentException.class, () -> new ReceiveCredits(4, 1).onDemand(0));
        assertThrows(IllegalStateException.class, () -> new ReceiveCredits(4, 1).onBufferFreed());
    }

    @Test
    void initialCreditsAreBoundedByFreeBuffers() {
        ReceiveCredits c = new ReceiveCredits(4, 1);
        c.grantInitial(4);
        assertThrows(IllegalArgumentException.class, () -> c.grantInitial(1));
        assertTrue(c.onDataArrived());
    }
}
