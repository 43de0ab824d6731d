package io.rdmaflux.core.internal.credit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReceiveCreditsTest {
    @Test
    void everyFreeBufferIsCreditedOnce() {
        ReceiveCredits c = new ReceiveCredits(8, 4);
        assertEquals(8, c.grant());
        assertEquals(8, c.peerHolds());
        assertEquals(0, c.grant(), "nothing freed: nothing new to grant");
    }

    @Test
    void heldMessagesHoldCreditsUntilReleasedInAnyOrder() {
        ReceiveCredits c = new ReceiveCredits(4, 1);
        assertEquals(4, c.grant());
        c.takePending();
        for (int i = 0; i < 4; i++) {
            assertTrue(c.onDataArrived());
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
        ReceiveCredits c = new ReceiveCredits(4, 2);
        c.grantInitial(4);
        for (int i = 0; i < 4; i++) {
            assertTrue(c.onDataArrived());
        }
        c.onBufferFreed();
        c.grant();
        assertTrue(c.explicitCreditDue(), "peer holds nothing else: must not wait for the threshold");
        assertEquals(1, c.takePending());
        c.onBufferFreed();
        c.grant();
        assertFalse(c.explicitCreditDue(), "peer still holds 1 credit and 1 < threshold 2");
        c.onBufferFreed();
        c.grant();
        assertTrue(c.explicitCreditDue(), "2 pending reach the threshold");
        assertEquals(2, c.takePending());
        assertFalse(c.explicitCreditDue());
    }

    @Test
    void dataBeyondGrantedCreditIsAViolation() {
        ReceiveCredits c = new ReceiveCredits(1, 1);
        assertFalse(c.onDataArrived());
        c.grant();
        assertFalse(c.onDataArrived(), "a credit not yet sent to the peer cannot be used by it");
        c.takePending();
        assertTrue(c.onDataArrived());
        assertFalse(c.onDataArrived());
    }

    @Test
    void fragmentsCopiedOutFreeTheirBufferAtOnceSoOneBufferStreamsAnyMessage() {
        ReceiveCredits c = new ReceiveCredits(1, 1);
        for (int frag = 0; frag < 10; frag++) {
            assertEquals(1, c.grant());
            c.takePending();
            assertTrue(c.onDataArrived());
            c.onBufferFreed();
        }
        assertEquals(0, c.held());
    }

    @Test
    void pendingLeavesAtMost65535PerFrameHeader() {
        ReceiveCredits c = new ReceiveCredits(70_000, 1);
        c.grant();
        assertEquals(0xFFFF, c.takePending());
        assertEquals(70_000 - 0xFFFF, c.takePending());
        assertEquals(0, c.pending());
    }

    @Test
    void badValuesAreRejectedNamingThem() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ReceiveCredits(0, 1));
        assertTrue(e.getMessage().contains("it was 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new ReceiveCredits(4, 5));
        assertTrue(e.getMessage().contains("[1, 4]") && e.getMessage().contains("it was 5"), e.getMessage());
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
