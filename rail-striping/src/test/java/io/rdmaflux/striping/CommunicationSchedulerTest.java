package io.rdmaflux.striping;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommunicationSchedulerTest {

    /** What a sink saw, copied at post time (stripes are pooled). */
    record Posted(long id, long psn, int rail, long offset, long length, boolean striped, boolean resent, String message) {
    }

    private final List<Posted> posted = new ArrayList<>();
    private final List<String> released = new ArrayList<>();

    private CommunicationScheduler<String> scheduler(RailsSpec spec) {
        return new CommunicationScheduler<>(spec, s -> posted.add(new Posted(s.stripeId(), s.psn(), s.rail(), s.offsetBytes(),
            s.lengthBytes(), s.striped(), s.resent(), s.message())));
    }

    private void poll(CommunicationScheduler<String> s) {
        s.pollCompleted(Integer.MAX_VALUE, (m, psn, len) -> released.add(m));
    }

    @Test
    void smallMessagesAreMultiplexedAndLargeOnesStripedAtTheSwitchoverThreshold() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(2).switchoverThresholdBytes(8192).stripeGranuleBytes(1024));
        assertEquals(0, s.send("small", 8191, 0));
        assertEquals(1, s.send("large", 8192, 0));
        assertEquals(3, posted.size());
        assertFalse(posted.get(0).striped());
        assertEquals(8191, posted.get(0).length());
        assertEquals(new Posted(1, 1, 0, 0, 4096, true, false, "large"), posted.get(1));
        assertEquals(new Posted(2, 1, 1, 4096, 4096, true, false, "large"), posted.get(2));
    }

    @Test
    void completionFilterReleasesAMessageOnlyOnceEveryStripeCompleted() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(3).switchoverThresholdBytes(0).stripeGranuleBytes(1));
        s.send("m", 3000, 0);
        assertEquals(3, posted.size());
        s.onStripeCompleted(2, posted.get(2).id(), 10);
        s.onStripeCompleted(0, posted.get(0).id(), 20);
        poll(s);
        assertTrue(released.isEmpty());
        s.onStripeCompleted(1, posted.get(1).id(), 30);
        poll(s);
        assertEquals(List.of("m"), released);
        assertEquals(0, s.inFlight());
        StripingMetrics m = s.metrics();
        assertEquals(1, m.messagesCompleted());
        assertEquals(3000, m.totalBytes());
        assertEquals(1000, m.railBytes()[1]);
    }

    @Test
    void messagesAreReleasedInPsnOrderAndEarlyCompletionsAreCountedOutOfOrder() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(2).switchoverThresholdBytes(Long.MAX_VALUE));
        s.send("a", 10, 0);
        s.send("b", 10, 0);
        s.onStripeCompleted(1, posted.get(1).id(), 5);
        poll(s);
        assertTrue(released.isEmpty());
        s.onStripeCompleted(0, posted.get(0).id(), 9);
        poll(s);
        assertEquals(List.of("a", "b"), released);
        assertEquals(1, s.metrics().outOfOrderCompletions());
    }

    @Test
    void backPressuredOnceMaxInFlightMessagesAreOutstanding() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(1).maxInFlightMessages(2));
        assertEquals(0, s.send("a", 1, 0));
        assertEquals(1, s.send("b", 1, 0));
        assertEquals(CommunicationScheduler.BACK_PRESSURED, s.send("c", 1, 0));
        s.onStripeCompleted(0, posted.get(0).id(), 1);
        assertEquals(CommunicationScheduler.BACK_PRESSURED, s.send("c", 1, 1));
        poll(s);
        assertEquals(2, s.send("c", 1, 1));
    }

    @Test
    void completionsOutOfPostOrderOnARailAreRejected() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(1));
        s.send("a", 1, 0);
        s.send("b", 1, 0);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> s.onStripeCompleted(0, posted.get(1).id(), 1));
        assertTrue(e.getMessage().contains("in post order"), e.getMessage());
        s.onStripeCompleted(0, posted.get(0).id(), 1);
        e = assertThrows(IllegalStateException.class, () -> s.onStripeCompleted(0, posted.get(0).id(), 1));
        assertTrue(e.getMessage().contains("once each"), e.getMessage());
    }

    @Test
    void aFailedRailsUnacknowledgedStripesAreResentOnTheOthers() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(3).switchoverThresholdBytes(0).stripeGranuleBytes(1));
        s.send("m", 3000, 0);
        s.onStripeCompleted(0, posted.get(0).id(), 5);
        int resent = s.onRailFailed(1, new IllegalStateException("port down"), 6);
        assertEquals(1, resent);
        // the lost stripe [1000, 2000) is re-striped over rails 0 and 2
        List<Posted> again = posted.subList(3, posted.size());
        assertEquals(2, again.size());
        long bytes = 0;
        for (Posted p : again) {
            assertTrue(p.resent());
            assertTrue(p.rail() != 1);
            assertTrue(p.offset() >= 1000 && p.offset() + p.length() <= 2000);
            bytes += p.length();
        }
        assertEquals(1000, bytes);
        // a late completion from the dead rail is ignored
        s.onStripeCompleted(1, posted.get(1).id(), 7);
        s.onStripeCompleted(2, posted.get(2).id(), 8);
        for (Posted p : again) {
            s.onStripeCompleted(p.rail(), p.id(), 9);
        }
        poll(s);
        assertEquals(List.of("m"), released);
        StripingMetrics m = s.metrics();
        assertFalse(m.railUp()[1]);
        assertEquals(1, m.resentStripes());
        assertEquals(0.0, m.weights()[1]);
        assertEquals(0, s.onRailFailed(1, new IllegalStateException("again"), 10), "failing twice is a no-op");
    }

    @Test
    void whenNoRailRemainsTheInFlightMessagesAreHandedBackAndSendRefuses() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(2).switchoverThresholdBytes(Long.MAX_VALUE));
        s.send("a", 1, 0);
        s.send("b", 1, 0);
        s.onRailFailed(0, new IllegalStateException("first"), 1);
        s.onRailFailed(1, new IllegalStateException("second"), 2);
        Throwable cause = s.noRailCause();
        assertNotNull(cause);
        assertInstanceOf(NoRailException.class, cause);
        assertEquals("second", cause.getCause().getMessage());
        assertEquals(CommunicationScheduler.NO_RAIL, s.send("c", 1, 3));
        List<String> drained = new ArrayList<>();
        assertEquals(2, s.drainInFlight((m, psn, len) -> drained.add(m)));
        assertEquals(List.of("a", "b"), drained);
        assertEquals(0, s.inFlight());
    }

    @Test
    void rejectsBadArguments() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(2));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.send("x", -1, 0));
        assertTrue(e.getMessage().contains("lengthBytes >= 0 required but it was -1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> s.onStripeCompleted(2, 0, 0));
        assertTrue(e.getMessage().contains("rail in [0, 2) required but it was 2"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RailsSpec.rails(2).switchoverThresholdBytes(-5));
        assertTrue(e.getMessage().contains("was -5"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RailsSpec.rails(2).maxInFlightMessages(0));
        assertTrue(e.getMessage().contains("was 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RailsSpec.rails(2).weightHistoryCapacity(-1));
        assertTrue(e.getMessage().contains("was -1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new RailCounters(2, -1));
        assertTrue(e.getMessage().contains("historyCapacity >= 0 required but it was -1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new RailCounters(65, 0));
        assertTrue(e.getMessage().contains("65"), e.getMessage());
        RailCounters counters = new RailCounters(2, 0);
        IndexOutOfBoundsException outside = assertThrows(IndexOutOfBoundsException.class, () -> counters.posted(2));
        assertTrue(outside.getMessage().contains("2"), outside.getMessage());
        e = assertThrows(IllegalArgumentException.class,
            () -> new CommunicationScheduler<String>(RailsSpec.rails(2).multiplexing(n -> MultiplexingPolicies.roundRobin().create(3)), x -> { }));
        assertTrue(e.getMessage().contains("created for 2 rails"), e.getMessage());
    }

    @Test
    void aStripeCompletedInTheSamePollAsTheOneAheadOfItIsNotFedToThePerMessageAdaptivePolicy() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(2).switchoverThresholdBytes(0).stripeGranuleBytes(1)
            .striping(StripingPolicies.adaptive(0.5, Duration.ZERO, 0.02, 1, 1)));
        s.send("a", 1000, 0);
        s.send("b", 1000, 0);
        // rail 0 is seen to complete a at 10; rail 1 completes a at 40, then both b stripes are found in
        // the same polls as the a stripes ahead of them: b's times are unknown
        s.onStripeCompleted(0, posted.get(0).id(), 10);
        s.onStripeCompleted(1, posted.get(1).id(), 40);
        double afterA = s.stripingPolicy().share(0);
        assertTrue(afterA > 0.5, "a taught the policy that rail 0 is faster: " + afterA);
        s.onStripeCompleted(0, posted.get(2).id(), 10);
        s.onStripeCompleted(1, posted.get(3).id(), 40);
        assertEquals(afterA, s.stripingPolicy().share(0), "b is censored and leaves the weights alone");
        poll(s);
        assertEquals(List.of("a", "b"), released);
    }

    /** A rail failure re-stripes a lost stripe over the rails that carry the message's others. */
    @Test
    void aMessageCountsOnceOnEveryRailItUsedWhileEachStripeCountsOnItsOwn() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(3).switchoverThresholdBytes(0).stripeGranuleBytes(1));
        s.send("m", 3000, 100);
        assertEquals(3, posted.size());
        assertEquals(1, s.onRailFailed(2, new IllegalStateException("rail 2: port down"), 200));
        assertEquals(5, posted.size());
        assertEquals(0, posted.get(3).rail());
        assertEquals(1, posted.get(4).rail());
        s.onStripeCompleted(0, posted.get(0).id(), 300);
        s.onStripeCompleted(1, posted.get(1).id(), 300);
        s.onStripeCompleted(0, posted.get(3).id(), 400);
        s.onStripeCompleted(1, posted.get(4).id(), 400);
        poll(s);
        assertEquals(List.of("m"), released);
        StripingMetrics m = s.metrics();
        assertArrayEquals(new long[] {1500, 1500, 0}, m.railBytes());
        assertArrayEquals(new long[] {2, 2, 0}, m.railStripesCompleted());
        assertArrayEquals(new long[] {1, 1, 0}, m.railMessages());
        assertArrayEquals(new long[] {2, 2, 1}, m.railStripesPosted());
    }

    /** The initial weights are stamped with the clock of the first send: a plot on a system clock starts at its first message. */
    @Test
    void theWeightHistoryStartsAtTheFirstSendNotAtTimeZero() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(2).switchoverThresholdBytes(0).stripeGranuleBytes(1)
            .striping(StripingPolicies.adaptive(0.5, Duration.ZERO, 0.02, 1, 1)));
        assertTrue(s.metrics().weightHistory().isEmpty(), "nothing sent, no time known yet");
        long start = 16_035_000_000_000L;
        s.send("a", 1000, start);
        s.onStripeCompleted(0, posted.get(0).id(), start + 10);
        s.onStripeCompleted(1, posted.get(1).id(), start + 40);
        List<StripingMetrics.WeightSample> h = s.metrics().weightHistory();
        assertEquals(2, h.size());
        assertEquals(start, h.get(0).timeNs());
        assertEquals(0.5, h.get(0).shares()[0]);
        assertEquals(start + 40, h.get(1).timeNs());
    }

    @Test
    void weightHistoryIsBoundedAndRecordsEveryUpdate() {
        CommunicationScheduler<String> s = scheduler(RailsSpec.rails(2).switchoverThresholdBytes(0).stripeGranuleBytes(1)
            .striping(StripingPolicies.adaptive(0.5, Duration.ZERO, 0.02, 1, 1)).weightHistoryCapacity(3));
        for (int i = 0; i < 5; i++) {
            posted.clear();
            s.send("m" + i, 1000, i * 100L);
            s.onStripeCompleted(0, posted.get(0).id(), i * 100L + 10);
            s.onStripeCompleted(1, posted.get(1).id(), i * 100L + 40);
            poll(s);
        }
        List<StripingMetrics.WeightSample> h = s.metrics().weightHistory();
        assertEquals(3, h.size());
        assertEquals(440, h.get(2).timeNs());
        assertTrue(h.get(2).shares()[0] > h.get(0).shares()[0]);
    }
}
