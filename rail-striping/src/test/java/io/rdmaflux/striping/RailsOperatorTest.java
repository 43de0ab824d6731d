package io.rdmaflux.striping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Scannable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.test.subscriber.TestSubscriber;

class RailsOperatorTest {
    static final long GB = 1_000_000_000L;
    static final long MIB = 1 << 20;
    static final java.time.Duration TIMEOUT = java.time.Duration.ofSeconds(10);

    private final VirtualTimeLoop loop = new VirtualTimeLoop();
    private final ReceiveSequencer receiver = new ReceiveSequencer(4096);
    private final List<Long> delivered = new ArrayList<>();
    private final List<SimRailSubchannel> subchannels = new ArrayList<>();
    private Set<Thread> threadsBefore = Set.of();

    @BeforeEach
    void recordThreads() {
        threadsBefore = Thread.getAllStackTraces().keySet();
    }

    @AfterEach
    void noStrayThreadsAndSubchannelsStopped() {
        Set<String> extra = Thread.getAllStackTraces().keySet().stream().filter(t -> !threadsBefore.contains(t) && t.isAlive())
            .map(Thread::getName).collect(Collectors.toSet());
        assertTrue(extra.isEmpty(), "stray threads " + extra);
        for (SimRailSubchannel sc : subchannels) {
            assertEquals(sc.started, sc.stopped, "every started subchannel is stopped");
        }
    }

    private List<SimRailSubchannel> rails(long... rates) {
        for (long rate : rates) {
            subchannels.add(new SimRailSubchannel(loop, new SimLink(loop, "r" + subchannels.size(), rate, 2_000, 64 * 1024),
                receiver, delivered));
        }
        return subchannels;
    }

    private static long size(Long i) {
        return i % 3 == 0 ? MIB : 512;
    }

    @Test
    void emitsEveryMessageOnceAllItsStripesCompletedInUpstreamOrder() {
        RailsSpec spec = RailsSpec.rails(2).striping(StripingPolicies.adaptive()).maxInFlightMessages(8);
        Flux<Long> out = Flux.fromStream(LongStream.range(0, 60).boxed())
            .transform(Rails.stripe(spec, rails(GB, GB / 4), RailsOperatorTest::size, loop::nowNs));
        StepVerifier.create(out)
            .then(() -> loop.runToIdle(10_000_000_000L))
            .expectNextSequence(LongStream.range(0, 60).boxed().toList())
            .expectComplete()
            .verify(TIMEOUT);
        assertEquals(LongStream.range(0, 60).boxed().toList(), delivered);
    }

    /*
     * Tests that request step by step drive the rails with a TestSubscriber rather than StepVerifier:
     * StepVerifier runs its tasks inside onNext, so a task advancing virtual time would run while
     * the operator's drain loop is still on the stack and the messages it posts afterwards would
     * never see their time advance.
     */
    @Test
    void requestsAtMostMaxInFlightFromUpstreamAndHoldsCompletedMessagesUntilDemand() {
        RailsSpec spec = RailsSpec.rails(2).maxInFlightMessages(4);
        AtomicLong upstreamRequested = new AtomicLong();
        Flux<Long> out = Flux.fromStream(LongStream.range(0, 100).boxed())
            .doOnRequest(upstreamRequested::addAndGet)
            .transform(Rails.stripe(spec, rails(GB, GB), i -> 1000, loop::nowNs));
        TestSubscriber<Long> ts = TestSubscriber.builder().initialRequest(0).build();
        out.subscribe(ts);
        loop.runToIdle(1_000_000_000L);
        assertEquals(4, upstreamRequested.get());
        assertTrue(ts.getReceivedOnNext().isEmpty(), "completed messages wait for demand");
        assertEquals(List.of(0L, 1L, 2L, 3L), delivered, "but they were sent and delivered");
        ts.request(2);
        assertEquals(List.of(0L, 1L), ts.getReceivedOnNext());
        loop.runToIdle(1_000_000_000L);
        assertTrue(upstreamRequested.get() <= 6, "requested " + upstreamRequested.get());
        ts.request(Long.MAX_VALUE);
        loop.runToIdle(1_000_000_000L);
        assertEquals(LongStream.range(0, 100).boxed().toList(), ts.getReceivedOnNext());
        assertTrue(ts.isTerminatedComplete());
    }

    @Test
    void aRailKilledMidStreamLosesNothingAndDuplicatesNothing() {
        RailsSpec spec = RailsSpec.rails(3).striping(StripingPolicies.adaptive()).maxInFlightMessages(16);
        List<SimRailSubchannel> sc = rails(GB, GB / 2, GB / 4);
        loop.at(3_000_000, () -> sc.get(1).kill());
        Flux<Long> out = Flux.fromStream(LongStream.range(0, 300).boxed())
            .transform(Rails.stripe(spec, sc, RailsOperatorTest::size, loop::nowNs));
        AtomicReference<Scannable> scan = new AtomicReference<>();
        StepVerifier.create(out.doOnSubscribe(s -> scan.set(Scannable.from(s))))
            .then(() -> loop.runToIdle(60_000_000_000L))
            .expectNextSequence(LongStream.range(0, 300).boxed().toList())
            .expectComplete()
            .verify(TIMEOUT);
        assertEquals(LongStream.range(0, 300).boxed().toList(), delivered);
        StripingMetrics m = scan.get().scan(RailAttributes.METRICS);
        assertNotNull(m);
        assertTrue(m.resentStripes() > 0);
        assertEquals(0.0, m.weights()[1]);
        // the lost stripes were striped again over the rails carrying their messages' other stripes:
        // those rails completed more stripes than messages, and a message counts once per rail
        long[] messages = scan.get().scan(RailAttributes.RAIL_MESSAGES);
        long[] stripes = scan.get().scan(RailAttributes.RAIL_STRIPES);
        assertTrue(stripes[0] > messages[0] && stripes[2] > messages[2], "messages " + java.util.Arrays.toString(messages)
            + ", stripes " + java.util.Arrays.toString(stripes));
        for (int rail = 0; rail < 3; rail++) {
            assertTrue(messages[rail] <= 300, "rail " + rail + ": " + messages[rail] + " messages of 300");
        }
    }

    @Test
    void errorsWithNoRailExceptionAndDiscardsEverythingWhenAllRailsDie() {
        RailsSpec spec = RailsSpec.rails(2).maxInFlightMessages(8);
        List<SimRailSubchannel> sc = rails(GB, GB);
        loop.at(100_000, () -> sc.get(0).kill());
        loop.at(200_000, () -> sc.get(1).kill());
        Flux<Long> out = Flux.fromStream(LongStream.range(0, 1000).boxed())
            .transform(Rails.stripe(spec, sc, RailsOperatorTest::size, loop::nowNs));
        List<Object> emitted = new ArrayList<>();
        StepVerifier.create(out.doOnNext(emitted::add))
            .then(() -> loop.runToIdle(10_000_000_000L))
            .thenConsumeWhile(x -> true)
            .expectErrorSatisfies(e -> {
                assertInstanceOf(NoRailException.class, e);
                assertTrue(e.getCause().getMessage().contains("WR_FLUSH_ERR"));
            })
            .verifyThenAssertThat(TIMEOUT)
            .hasDiscardedElementsSatisfying(d -> {
                // every message taken from upstream is either emitted or discarded, never both
                for (Object o : d) {
                    assertTrue(!emitted.contains(o), "discarded and emitted: " + o);
                }
                assertTrue(!d.isEmpty());
            });
    }

    @Test
    void cancelStopsTheSubchannelsAndDiscardsQueuedAndInFlightMessages() {
        RailsSpec spec = RailsSpec.rails(2).maxInFlightMessages(8);
        List<Long> discarded = new ArrayList<>();
        List<Long> taken = new ArrayList<>();
        // Flux.range discards nothing itself on cancel, so every discard seen is the operator's
        Flux<Long> out = Flux.range(0, 1000).map(Long::valueOf).doOnNext(taken::add)
            .transform(Rails.stripe(spec, rails(GB, GB), RailsOperatorTest::size, loop::nowNs))
            .doOnDiscard(Long.class, discarded::add);
        TestSubscriber<Long> ts = TestSubscriber.builder().initialRequest(3).build();
        out.subscribe(ts);
        loop.runUntil(1_500_000);
        assertEquals(List.of(0L, 1L, 2L), ts.getReceivedOnNext());
        ts.cancel();
        // everything taken from upstream and not emitted, queued or in flight, is discarded
        assertEquals(taken.subList(3, taken.size()), discarded);
        assertTrue(discarded.size() >= 5, "discarded " + discarded);
        // completions after cancel go nowhere
        assertTrue(loop.runToIdle(1_000_000_000L));
        assertEquals(List.of(0L, 1L, 2L), ts.getReceivedOnNext());
    }

    @Test
    void scannableExposesWeightsBytesAndOutOfOrderCount() {
        RailsSpec spec = RailsSpec.rails(2).striping(StripingPolicies.adaptive()).maxInFlightMessages(8).switchoverThresholdBytes(0);
        Flux<Long> out = Flux.fromStream(LongStream.range(0, 50).boxed())
            .transform(Rails.stripe(spec, rails(GB, GB / 4), i -> MIB, loop::nowNs));
        List<Scannable> scans = new ArrayList<>();
        BaseSubscriber<Long> sub = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                scans.add(Scannable.from(s));
                requestUnbounded();
            }
        };
        out.subscribe(sub);
        loop.runToIdle(10_000_000_000L);
        Scannable s = scans.get(0);
        double[] w = s.scan(RailAttributes.WEIGHTS);
        assertNotNull(w);
        assertEquals(0.8, w[0], 0.01);
        long[] bytes = s.scan(RailAttributes.RAIL_BYTES);
        assertNotNull(bytes);
        assertEquals(50 * MIB, bytes[0] + bytes[1]);
        long[] messages = s.scan(RailAttributes.RAIL_MESSAGES);
        assertNotNull(messages);
        assertEquals(50, messages[0]);
        assertEquals(50, s.scan(RailAttributes.RAIL_STRIPES)[0]);
        assertNotNull(s.scan(RailAttributes.OUT_OF_ORDER));
        assertEquals(8, s.scan(Scannable.Attr.PREFETCH));
        assertTrue(s.scan(Scannable.Attr.TERMINATED));
    }

    @Test
    void aSubchannelCompletingOutOfPostOrderErrorsTheFluxInsteadOfThrowing() {
        RailSubchannel<Long> broken = new RailSubchannel<>() {
            private final List<Long> ids = new ArrayList<>();
            private RailSubchannel.StripeListener listener;

            @Override
            public void start(int rail, StripeListener l) {
                listener = l;
            }

            @Override
            public void post(Stripe<Long> stripe) {
                ids.add(stripe.stripeId());
                if (ids.size() == 2) {
                    // reports the second stripe first
                    listener.onStripeCompleted(0, ids.get(1), 0);
                }
            }
        };
        List<Long> discarded = new ArrayList<>();
        Flux<Long> out = Flux.range(0, 5).map(Long::valueOf)
            .transform(Rails.multiplex(MultiplexingPolicies.roundRobin(), List.of(broken), i -> 10, loop::nowNs))
            .doOnDiscard(Long.class, discarded::add);
        TestSubscriber<Long> ts = TestSubscriber.create();
        out.subscribe(ts);
        assertTrue(ts.isTerminatedError());
        Throwable e = ts.expectTerminalError();
        assertInstanceOf(IllegalStateException.class, e);
        assertTrue(e.getMessage().contains("in post order"), e.getMessage());
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), discarded);
    }

    @Test
    void multiplexNeverStripes() {
        List<SimRailSubchannel> sc = rails(GB, GB);
        Flux<Long> out = Flux.fromStream(LongStream.range(0, 10).boxed())
            .transform(Rails.multiplex(MultiplexingPolicies.windowRoundRobin(5), sc, i -> 4 * MIB, loop::nowNs));
        StepVerifier.create(out).then(() -> loop.runToIdle(10_000_000_000L)).expectNextCount(10).expectComplete()
            .verify(TIMEOUT);
        assertEquals(5, sc.get(0).posted);
        assertEquals(5, sc.get(1).posted);
    }

    @Test
    void rejectsASubchannelCountThatDoesNotMatchTheSpec() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Rails.stripe(RailsSpec.rails(3), rails(GB, GB), i -> 1L, loop::nowNs));
        assertTrue(e.getMessage().contains("spec has 3 rails but 2 subchannels"), e.getMessage());
        subchannels.clear();
    }

}
