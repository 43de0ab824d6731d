package io.rdmaflux.core.reorder;

import io.rdmaflux.core.RdmaMessage;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertThrows;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.test.publisher.TestPublisher;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReorderByPsnTest {
    record Item(int psn) {
    }

    private static Flux<Item> items(int... psns) {
        return Flux.fromStream(IntStream.of(psns).mapToObj(Item::new));
    }

    @Test
    void windowDeliversInOrderAndDrainsQueuedSuccessors() {
        ReorderWindow<Integer> w = new ReorderWindow<>(0, 4);
        List<Integer> out = new ArrayList<>();
        w.offer(2, 2, out::add);
        w.offer(1, 1, out::add);
        assert out.isEmpty();
        assertEquals(3, w.span(), "PSNs 0..2 must arrive to drain the queue");
        assertEquals(3, w.offer(0, 0, out::add));
        assertEquals(List.of(0, 1, 2), out);
        assertEquals(3, w.esn());
        assertEquals(0, w.span());
    }

    @Test
    void windowWrapsAroundThe32BitPsnSpace() {
        ReorderWindow<Integer> w = new ReorderWindow<>(Integer.MAX_VALUE, 4);
        List<Integer> out = new ArrayList<>();
        w.offer(Integer.MIN_VALUE, 2, out::add);
        w.offer(Integer.MAX_VALUE, 1, out::add);
        assertEquals(List.of(1, 2), out);
    }

    @Test
    void windowOverflowNamesPsnEsnAndWindow() {
        ReorderWindow<Integer> w = new ReorderWindow<>(0, 4);
        ReorderWindowOverflowException e = assertThrows(ReorderWindowOverflowException.class,
            () -> w.offer(4, 4, x -> { }));
        assertTrue(e.getMessage().contains("PSN 4") && e.getMessage().contains("ESN 0") && e.getMessage().contains("holds 4"), e.getMessage());
        assertThrows(ReorderWindowOverflowException.class, () -> w.offer(-1, 0, x -> { }));
        w.offer(1, 1, x -> { });
        assertThrows(ReorderWindowOverflowException.class, () -> w.offer(1, 1, x -> { }));
        assertEquals(1, w.queued());
    }

    @Test
    void operatorRestoresOrder() {
        StepVerifier.create(items(1, 0, 3, 2, 4).transform(Reorder.byPsn(Item::psn, 0, 4)))
            .expectNext(new Item(0), new Item(1), new Item(2), new Item(3), new Item(4))
            .verifyComplete();
    }

    @Test
    void operatorHonoursDemandOfOneAtATime() {
        StepVerifier.create(items(2, 1, 0, 3).transform(Reorder.byPsn(Item::psn, 0, 8)), 0)
            .expectSubscription()
            .expectNoEvent(java.time.Duration.ZERO)
            .thenRequest(1)
            .expectNext(new Item(0))
            .thenRequest(1)
            .expectNext(new Item(1))
            .thenRequest(2)
            .expectNext(new Item(2), new Item(3))
            .verifyComplete();
    }

    @Test
    void operatorRequestsOnlyWhatDemandAndHolesNeed() {
        TestPublisher<Item> source = TestPublisher.create();
        StepVerifier.create(source.flux().transform(Reorder.byPsn(Item::psn, 0, 8)), 1)
            .then(() -> assertTrue(source.wasRequested()))
            .then(() -> source.assertMinRequested(1))
            .then(() -> source.next(new Item(2)))
            .then(() -> source.assertMinRequested(2))
            .then(() -> source.next(new Item(1), new Item(0)))
            .expectNext(new Item(0))
            .thenRequest(2)
            .expectNext(new Item(1), new Item(2))
            .thenCancel()
            .verify();
    }

    @Test
    void overflowTerminatesWithClearErrorAndDiscardsQueuedItems() {
        StepVerifier.create(items(1, 2, 9, 0).transform(Reorder.byPsn(Item::psn, 0, 4)))
            .expectErrorSatisfies(e -> assertTrue(e instanceof ReorderWindowOverflowException
                && e.getMessage().contains("PSN 9") && e.getMessage().contains("window holds 4"), e.toString()))
            .verifyThenAssertThat()
            .hasDiscarded(new Item(9), new Item(1), new Item(2));
    }

    @Test
    void completionWithAHoleIsAnError() {
        StepVerifier.create(items(0, 2).transform(Reorder.byPsn(Item::psn, 0, 4)))
            .expectNext(new Item(0))
            .expectErrorMatches(e -> e instanceof ReorderWindowOverflowException && e.getMessage().contains("ESN"))
            .verifyThenAssertThat()
            .hasDiscarded(new Item(2));
    }

    @Test
    void cancelDiscardsBufferedItems() {
        TestPublisher<Item> source = TestPublisher.create();
        StepVerifier.create(source.flux().transform(Reorder.byPsn(Item::psn, 0, 8)), 4)
            .then(() -> source.next(new Item(3), new Item(1)))
            .thenCancel()
            .verifyThenAssertThat()
            .hasDiscardedExactly(new Item(3), new Item(1));
    }

    @Test
    void messagesByPsnReleasesDiscardedMessages() {
        RdmaMessage a = RdmaMessage.of(new byte[1]);
        TestPublisher<RdmaMessage> source = TestPublisher.createNoncompliant(TestPublisher.Violation.REQUEST_OVERFLOW);
        StepVerifier.create(source.flux().transform(Reorder.byPsn(m -> 5, 0, 8))
                .doOnDiscard(RdmaMessage.class, RdmaMessage::release), 1)
            .then(() -> source.next(a))
            .thenCancel()
            .verify();
        assertEquals(0, a.refCnt());
    }

    @Test
    void randomPermutationsWithinTheWindowComeOutInOrder() {
        for (long seed = 1; seed <= 50; seed++) {
            Random r = new Random(seed);
            int n = 200;
            int window = 1 + r.nextInt(16);
            List<Integer> psns = new ArrayList<>();
            for (int base = 0; base < n; base += window) {
                List<Integer> block = new ArrayList<>();
                for (int i = base; i < Math.min(n, base + window); i++) {
                    block.add(i);
                }
                Collections.shuffle(block, r);
                psns.addAll(block);
            }
            List<Item> out = Flux.fromIterable(psns).map(Item::new).transform(Reorder.byPsn(Item::psn, 0, window))
                .limitRate(1 + r.nextInt(8)).collectList().block();
            assertEquals(IntStream.range(0, n).boxed().toList(), out.stream().map(Item::psn).toList(), "seed " + seed);
        }
    }

    @Test
    void factoryRejectsBadWindow() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Reorder.byPsn(Item::psn, 0, 0));
        assertTrue(e.getMessage().contains("windowSize in [1, 16777216] required but it was 0")
            && e.getMessage().contains("at least 1"), e.getMessage());
    }
}
