package io.rdmaflux.core.stripe;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StripeEngineTest {

    /** Splits in fixed proportions over the usable rails and records every feedback call. */
    static final class RecordingPolicy implements StripePolicy {
        final List<String> calls = new ArrayList<>();
        long[] fixed;

        @Override
        public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
            if (fixed != null) {
                System.arraycopy(fixed, 0, stripeBytes, 0, fixed.length);
                return;
            }
            int n = Long.bitCount(usableRails);
            long share = lengthBytes / n;
            long rest = lengthBytes - share * n;
            for (int r = 0; r < stripeBytes.length; r++) {
                if ((usableRails & (1L << r)) != 0) {
                    stripeBytes[r] = share + (rest-- > 0 ? 1 : 0);
                }
            }
        }

        @Override
        public void onStripePosted(int rail, long lengthBytes, long nowNs) {
            calls.add("posted " + rail + " " + lengthBytes + " @" + nowNs);
        }

        @Override
        public void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs, boolean railIdleAtPost,
                                      int outstandingOnRail) {
            calls.add("completed " + rail + " " + lengthBytes + " " + postedNs + ".." + completedNs
                + (railIdleAtPost ? " idle" : " queued") + " left " + outstandingOnRail);
        }

        @Override
        public void onMessageCompleted(MessageTimings t) {
            calls.add("message " + t.lengthBytes() + " rails 0x" + Long.toHexString(t.railsUsed()) + " t0=" + t.deliveryTimeNs(0)
                + " t1=" + t.stripeBytes(1) + "B/" + t.deliveryTimeNs(1) + (t.resent() ? " resent" : "") + (t.censored() ? " censored" : ""));
        }

        @Override
        public void onRailRemoved(int rail) {
            calls.add("removed " + rail);
        }

        @Override
        public String name() {
            return "recording";
        }
    }

    private final RecordingPolicy policy = new RecordingPolicy();
    private final StripeEngine engine = new StripeEngine(2, 4, policy);

    @Test
    void aSplitPutsRailRsStripeInSlotRContiguousInRailOrder() {
        engine.begin(0, 7, 1001);
        assertEquals(2, engine.split(0, 0b11, 0));
        assertEquals(0b11, engine.slots(0));
        assertEquals(0, engine.stripeOffset(0, 0));
        assertEquals(501, engine.stripeBytes(0, 0));
        assertEquals(501, engine.stripeOffset(0, 1));
        assertEquals(500, engine.stripeBytes(0, 1));
        assertTrue(engine.striped(0));
        engine.begin(1, 8, 300);
        engine.whole(1, 1);
        assertEquals(0b10, engine.slots(1));
        assertEquals(300, engine.stripeBytes(1, 1));
        assertFalse(engine.striped(1));
    }

    /** Entries get their slot rows and timings when first begun; one never begun reads as empty, and is safe to ask about. */
    @Test
    void anEntryNeverBegunReadsAsEmptyAndEntriesFirstUsedInAnyOrderWork() {
        StripeEngine wide = new StripeEngine(2, 64, new RecordingPolicy());
        assertEquals(0, wide.lengthBytes(40));
        assertEquals(null, wide.timings(40));
        assertEquals(0, wide.slots(40));
        assertFalse(wide.carriesOn(40, 1));
        assertEquals(StripeEngine.IGNORED, wide.complete(40, 0, 5), "no stripe there: a late completion is ignored");
        wide.unpostAll(40);
        for (int e : new int[] {63, 0, 17}) {
            wide.begin(e, e, 1000 + e);
            assertEquals(2, wide.split(e, 0b11, 0));
            wide.post(e, 0, 0, 1);
            wide.post(e, 1, 1, 1);
            assertEquals(StripeEngine.STRIPE, wide.complete(e, 0, 9));
            assertEquals(StripeEngine.MESSAGE, wide.complete(e, 1, 9));
            assertEquals(1000 + e, wide.timings(e).lengthBytes());
        }
        assertEquals(0, wide.backlogBytes(0) + wide.backlogBytes(1));
    }

    @Test
    void theCompletionFilterReportsTheMessageOnceAfterItsLastStripeWithItsTimings() {
        engine.begin(0, 1, 2000);
        engine.split(0, 0b11, 10);
        engine.post(0, 0, 0, 10);
        engine.post(0, 1, 1, 10);
        assertEquals(2000, engine.backlogBytes(0) + engine.backlogBytes(1));
        assertEquals(StripeEngine.STRIPE, engine.complete(0, 1, 50));
        assertEquals(StripeEngine.IGNORED, engine.complete(0, 1, 51), "a second completion of a stripe is dropped");
        assertEquals(StripeEngine.MESSAGE, engine.complete(0, 0, 110));
        assertEquals(StripeEngine.IGNORED, engine.complete(0, 0, 111));
        assertEquals(List.of("posted 0 1000 @10", "posted 1 1000 @10",
            "completed 1 1000 10..50 idle left 0",
            "completed 0 1000 10..110 idle left 0",
            "message 2000 rails 0x3 t0=100 t1=1000B/40"), policy.calls);
        assertEquals(0b11, engine.completedOn(0));
        assertEquals(0, engine.backlogBytes(0) + engine.backlogBytes(1));
    }

    @Test
    void aStripeQueuedBehindAnotherIsTimedFromThePreviousCompletionAndNotIdleAtPost() {
        engine.begin(0, 1, 100);
        engine.whole(0, 0);
        engine.post(0, 0, 0, 0);
        engine.begin(1, 2, 100);
        engine.whole(1, 0);
        engine.post(1, 0, 0, 5);
        assertTrue(engine.idleAtPost(0, 0));
        assertFalse(engine.idleAtPost(1, 0));
        assertEquals(2, engine.outstandingOn(0));
        assertEquals(StripeEngine.MESSAGE, engine.complete(0, 0, 30));
        assertEquals(StripeEngine.MESSAGE, engine.complete(1, 0, 70));
        assertEquals(40, engine.timings(1).deliveryTimeNs(0), "from the previous completion at 30, not the post at 5");
        assertEquals("completed 0 100 5..70 queued left 0", policy.calls.get(policy.calls.size() - 1));
        assertFalse(policy.calls.stream().anyMatch(c -> c.startsWith("message")), "whole messages give no message timings");
    }

    /**
     * What a policy that splits by the engine's state relies on: the engine attaches itself, every
     * message (split or whole) passes the completion filter once with the rails that carried it, and
     * during a stripe's feedback the previous completion on its rail is still readable.
     */
    @Test
    void anAttachedPolicyHearsEveryMessageCarriedAndReadsThePreviousCompletionDuringFeedback() {
        List<String> seen = new ArrayList<>();
        StripeEngine[] attached = new StripeEngine[1];
        StripePolicy p = new StripePolicy() {
            @Override
            public void attach(StripeEngine e) {
                attached[0] = e;
            }

            @Override
            public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
                stripeBytes[0] = lengthBytes / 2;
                stripeBytes[1] = lengthBytes - lengthBytes / 2;
            }

            @Override
            public void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs, boolean idle, int left) {
                seen.add("completed " + rail + " @" + completedNs + " previous @" + attached[0].lastCompletionNs(rail));
            }

            @Override
            public void onMessageCarried(long psn, long carriedOnRails) {
                seen.add("carried " + psn + " 0x" + Long.toHexString(carriedOnRails));
            }

            @Override
            public void onMessageCompleted(MessageTimings t) {
                seen.add("message");
            }

            @Override
            public String name() {
                return "attached";
            }
        };
        StripeEngine e = new StripeEngine(2, 2, p);
        assertTrue(attached[0] == e, "the constructor attached the engine");
        e.begin(0, 5, 100);
        e.whole(0, 1);
        e.post(0, 1, 1, 0);
        e.begin(1, 6, 200);
        e.split(1, 0b11, 0);
        e.post(1, 0, 0, 0);
        e.post(1, 1, 1, 0);
        e.complete(0, 1, 10);
        e.complete(1, 0, 20);
        e.complete(1, 1, 30);
        assertEquals(List.of("completed 1 @10 previous @0", "carried 5 0x2", "completed 0 @20 previous @0",
            "completed 1 @30 previous @10", "carried 6 0x3", "message"), seen);
        assertEquals(30, e.lastCompletionNs(1));
        assertEquals(0b11, e.completedSlots(1));
    }

    @Test
    void completionsSeenAtTheSameInstantCensorTheMessage() {
        engine.begin(0, 1, 200);
        engine.split(0, 0b11, 0);
        engine.begin(1, 2, 200);
        engine.split(1, 0b11, 0);
        engine.post(0, 0, 0, 0);
        engine.post(0, 1, 1, 0);
        engine.post(1, 0, 0, 0);
        engine.post(1, 1, 1, 0);
        engine.complete(0, 0, 10);
        engine.complete(0, 1, 10);
        engine.complete(1, 0, 10);
        assertEquals(StripeEngine.MESSAGE, engine.complete(1, 1, 20));
        assertTrue(engine.timings(1).censored());
        assertFalse(engine.timings(0).censored());
    }

    @Test
    void aFailedRailsStripeIsTakenBackAndReplannedOverTheOthers() {
        StripeEngine three = new StripeEngine(3, 2, policy);
        three.begin(0, 9, 3000);
        three.split(0, 0b111, 0);
        for (int r = 0; r < 3; r++) {
            three.post(0, r, r, 0);
        }
        three.complete(0, 0, 5);
        assertTrue(three.railFailed(1));
        assertFalse(three.railFailed(1), "failing twice is a no-op");
        assertTrue(three.carriesOn(0, 1));
        three.unpost(0, 1);
        assertFalse(three.carriesOn(0, 1));
        long slots = three.resplit(0, 1, 6);
        assertEquals(2, Long.bitCount(slots));
        long bytes = 0;
        for (long m = slots; m != 0; m &= m - 1) {
            int s = Long.numberOfTrailingZeros(m);
            assertTrue(three.carrier(0, s) == 0 || three.carrier(0, s) == 2);
            assertTrue(three.stripeOffset(0, s) >= 1000 && three.stripeOffset(0, s) + three.stripeBytes(0, s) <= 2000);
            bytes += three.stripeBytes(0, s);
            three.post(0, s, three.carrier(0, s), 6);
        }
        assertEquals(1000, bytes);
        assertEquals(0, three.usableRails() & 0b10);
        int last = StripeEngine.IGNORED;
        last = three.complete(0, 2, 7);
        for (long m = slots; m != 0; m &= m - 1) {
            last = three.complete(0, Long.numberOfTrailingZeros(m), 8);
        }
        assertEquals(StripeEngine.MESSAGE, last);
        assertTrue(three.timings(0).resent());
        assertEquals(0, three.timings(0).stripeBytes(1), "the failed rail's bytes no longer count for it");
        assertTrue(policy.calls.contains("removed 1"));
    }

    @Test
    void aStripeTakenBackWhoseCompletionArrivesBeforeItIsPostedAgainCountsAndIsNotPostedTwice() {
        engine.begin(0, 1, 2000);
        engine.split(0, 0b11, 0);
        engine.post(0, 0, 0, 0);
        engine.post(0, 1, 1, 0);
        engine.railFailed(1);
        engine.unpostAll(0);
        assertEquals(0, engine.outstandingOn(0));
        assertEquals(0, engine.postedOrCompleted(0));
        assertEquals(StripeEngine.STRIPE, engine.complete(0, 0, 10));
        assertEquals(0b01, engine.postedOrCompleted(0) & 0b01);
        engine.post(0, 1, 0, 11);
        assertEquals(StripeEngine.MESSAGE, engine.complete(0, 1, 20));
        assertEquals(0, engine.outstandingOn(0));
        assertEquals(0, engine.backlogBytes(0));
    }

    @Test
    void aPolicyThatSplitsWronglyIsNamedWithItsSplit() {
        engine.begin(0, 42, 1000);
        policy.fixed = new long[] {600, 300};
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> engine.split(0, 0b11, 0));
        assertTrue(e.getMessage().startsWith("recording split PSN 42 of 1000 bytes wrongly: the stripes add up to 900 bytes [600, 300]"),
            e.getMessage());
        policy.fixed = new long[] {0, 1000};
        e = assertThrows(IllegalStateException.class, () -> engine.split(0, 0b01, 0));
        assertTrue(e.getMessage().contains("rail 1 is not usable"), e.getMessage());
        policy.fixed = new long[] {1100, -100};
        e = assertThrows(IllegalStateException.class, () -> engine.split(0, 0b11, 0));
        assertTrue(e.getMessage().contains("rail 1 got -100 bytes"), e.getMessage());
        assertEquals(0, engine.slots(0), "nothing is planned by a wrong split");
    }

    @Test
    void badInputIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> new StripeEngine(0, 1, policy));
        assertThrows(IllegalArgumentException.class, () -> new StripeEngine(65, 1, policy));
        assertThrows(IllegalArgumentException.class, () -> new StripeEngine(2, 0, policy));
        engine.begin(0, 1, 10);
        engine.whole(0, 0);
        assertThrows(IndexOutOfBoundsException.class, () -> engine.post(0, 0, 2, 0));
        assertThrows(IllegalStateException.class, () -> engine.post(0, 1, 1, 0), "slot 1 holds no stripe");
        engine.post(0, 0, 0, 0);
        assertThrows(IllegalStateException.class, () -> engine.post(0, 0, 0, 0), "posted already");
        assertThrows(IllegalStateException.class, () -> engine.resplit(0, 0, 0), "not taken back");
        assertEquals(0, new StripeEngine(2, 1, policy).split(0, 0, 0), "no usable rail: nothing planned");
    }

    @Test
    void psnOrderReleasesInOrderAndTellsOutOfOrderCompletions() {
        PsnOrder order = new PsnOrder(3);
        assertEquals(4, order.capacity());
        long a = order.assign();
        long b = order.assign();
        long c = order.assign();
        assertTrue(order.complete(c), "c before a and b");
        assertFalse(order.headCompleted());
        assertFalse(order.complete(a));
        assertTrue(order.headCompleted());
        order.release();
        assertFalse(order.headCompleted(), "b is not complete");
        assertFalse(order.complete(b));
        order.release();
        order.release();
        assertEquals(0, order.inFlight());
        assertEquals(3, order.nextPsn());
        order.assign();
        order.assign();
        order.assign();
        order.assign();
        assertThrows(IllegalStateException.class, order::assign);
        assertThrows(IllegalArgumentException.class, () -> new PsnOrder(0));
    }
}
