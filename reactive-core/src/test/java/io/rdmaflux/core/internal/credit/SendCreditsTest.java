package io.rdmaflux.core.internal.credit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SendCreditsTest {
    @Test
    void requestsOnlyTheQueueBeforeAnyCredit() {
        SendCredits s = new SendCredits(4);
        assertEquals(4, s.toRequest());
        assertEquals(0, s.toRequest());
    }

    @Test
    void outstandingNeverExceedsCreditsPlusQueue() {
        SendCredits s = new SendCredits(2);
        s.toRequest();
        s.onGrant(3);
        assertEquals(3, s.toRequest());
        assertEquals(5, s.outstanding());
        s.consume();
        s.onTaken();
        assertEquals(0, s.toRequest(), "taking one message used one credit: the bound did not move");
        s.onGrant(1);
        assertEquals(1, s.toRequest());
        assertEquals(s.credits() + s.queueCapacity(), s.outstanding());
        assertEquals(5, s.maxOutstandingSeen());
    }

    @Test
    void aFragmentedMessageUsesOneCreditPerFragment() {
        SendCredits s = new SendCredits(1);
        s.onGrant(3);
        s.toRequest();
        for (int i = 0; i < 3; i++) {
            s.consume();
        }
        s.onTaken();
        assertThrows(IllegalStateException.class, s::consume);
    }

    @Test
    void takingAPackedFrameUsesOneCreditAndOneRequestPerMessage() {
        SendCredits s = new SendCredits(2);
        s.onGrant(5);
        assertEquals(7, s.toRequest());
        s.take(5);
        assertEquals(0, s.credits());
        assertEquals(2, s.outstanding());
        assertEquals(0, s.toRequest(), "the frame's messages used their credits: nothing more to request");
        s.onGrant(5);
        assertEquals(5, s.toRequest());
    }

    @Test
    void takingMoreThanHeldOrRequestedIsRefusedAndChangesNothing() {
        SendCredits s = new SendCredits(1);
        s.onGrant(3);
        s.toRequest();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> s.take(5));
        assertTrue(e.getMessage().contains("5") && e.getMessage().contains("3 credits"), e.getMessage());
        assertEquals(3, s.credits());
        assertEquals(4, s.outstanding());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> s.take(-1));
        assertTrue(bad.getMessage().contains("-1"), bad.getMessage());
        s.take(0);
        assertEquals(3, s.credits());
    }

    @Test
    void rejectsBadValues() {
        assertThrows(IllegalArgumentException.class, () -> new SendCredits(0));
        assertThrows(IllegalArgumentException.class, () -> new SendCredits(1).onGrant(-1));
        assertThrows(IllegalStateException.class, () -> new SendCredits(1).onTaken());
    }

    @Test
    void runningTotalsSurviveALostFrameAndIgnoreStaleOnes() {
        MessageCredits granter = new MessageCredits(1);
        SendCredits holder = new SendCredits(1);
        granter.onDemand(100);
        granter.grant(3);
        int lost = granter.takeWireTotal();       // this frame dies with its rail
        assertEquals(3, lost);
        granter.grant(5);
        int next = granter.takeWireTotal();       // a later frame on a live rail carries the total
        holder.onGrantTotal(next);
        assertEquals(5, holder.credits(), "the credits of the lost frame are not lost");
        holder.onGrantTotal(lost);                // an older total arriving late adds nothing
        assertEquals(5, holder.credits());
    }

    @Test
    void runningTotalsWrapAroundFifteenBits() {
        SendCredits holder = new SendCredits(1);
        int total = 0;
        for (int i = 0; i < 5; i++) {
            total = (total + 10_000) & 0x7FFF;
            holder.onGrantTotal(total);
        }
        assertEquals(50_000, holder.credits());
    }
}
