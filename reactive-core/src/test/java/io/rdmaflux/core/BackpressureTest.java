package io.rdmaflux.core;

import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Demand patterns against the credit bound: the sender never has more messages taken from its
 * publisher and not yet consumed than the credits granted plus its send queue.
 */
class BackpressureTest {
    private static final int RECEIVE_BUFFERS = 8;
    private static final int SEND_QUEUE = 4;
    private static final int N = 200;

    private VerbsLeakCheck leaks;
    private final AtomicInteger emitted = new AtomicInteger();

    @BeforeEach
    void begin() {
        leaks = VerbsLeakCheck.begin();
    }

    @AfterEach
    void noLeaks() {
        leaks.assertClean();
    }

    private InvokerPair pair() {
        return InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS).sendQueue(SEND_QUEUE).creditThreshold(2));
    }

    private Flux<RdmaMessage> numbered() {
        return Flux.range(0, N).doOnNext(i -> emitted.incrementAndGet())
            .map(i -> RdmaMessage.of(ByteBuffer.allocate(4).putInt(0, i)));
    }

    private static int value(RdmaMessage m) {
        int v = m.content().getInt(0, java.nio.ByteOrder.BIG_ENDIAN);
        m.release();
        return v;
    }

    @Test
    void subscriberRequestingOneAtATimeHoldsTheSenderToOnePlusItsQueue() {
        try (InvokerPair p = pair()) {
            AtomicBoolean sent = new AtomicBoolean();
            p.client.send(numbered()).subscribe(null, null, () -> sent.set(true));
            StepVerifier.Step<Integer> step = StepVerifier.create(p.server.receive().map(BackpressureTest::value), 0)
                .then(p::drive)
                .then(() -> assertTrue(emitted.get() <= SEND_QUEUE, "no demand: only the send queue is taken, was " + emitted.get()));
            for (int i = 0; i < N; i++) {
                int expected = i;
                step = step.thenRequest(1).then(p::drive).expectNext(expected)
                    .then(() -> assertTrue(emitted.get() <= expected + 1 + 1 + SEND_QUEUE,
                        "emitted " + emitted.get() + " after " + (expected + 1) + " consumed with demand 1"));
            }
            step.then(p::drive).then(() -> assertTrue(sent.get())).thenCancel().verify();
            assertTrue(p.client.metrics().maxOutstandingRequest() <= 1 + SEND_QUEUE,
                "max outstanding " + p.client.metrics().maxOutstandingRequest());
        }
    }

    @Test
    void subscriberThatStopsStopsTheSenderWithinCreditsPlusQueue() {
        try (InvokerPair p = pair()) {
            AtomicBoolean sent = new AtomicBoolean();
            p.client.send(numbered()).subscribe(null, null, () -> sent.set(true));
            StepVerifier.create(p.server.receive().map(BackpressureTest::value), 5)
                .then(p::drive)
                .expectNext(0, 1, 2, 3, 4)
                .then(() -> {
                    for (int i = 0; i < 50; i++) {
                        p.drive();
                    }
                })
                .then(() -> assertTrue(emitted.get() <= 5 + SEND_QUEUE, "emitted " + emitted.get()))
                .then(() -> assertFalse(sent.get()))
                .expectNoEvent(java.time.Duration.ZERO)
                .thenCancel()
                .verify();
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void unboundedDemandWithLateReleaseIsBoundedByReceiveBuffers() {
        try (InvokerPair p = pair()) {
            AtomicBoolean sent = new AtomicBoolean();
            p.client.send(numbered()).subscribe(null, null, () -> sent.set(true));
            List<RdmaMessage> held = new ArrayList<>();
            List<Integer> values = new ArrayList<>();
            p.server.receive().subscribe(held::add);
            for (int round = 0; values.size() < N; round++) {
                p.drive();
                assertTrue(held.size() <= RECEIVE_BUFFERS, "held " + held.size());
                assertTrue(emitted.get() - values.size() <= RECEIVE_BUFFERS + SEND_QUEUE,
                    "taken from the publisher and not consumed: " + (emitted.get() - values.size()));
                // release late and out of order: newest first
                for (int i = held.size() - 1; i >= 0; i--) {
                    values.add(held.get(i).content().getInt(0, java.nio.ByteOrder.BIG_ENDIAN));
                }
                List<RdmaMessage> batch = new ArrayList<>(held);
                held.clear();
                java.util.Collections.reverse(batch);
                batch.forEach(RdmaMessage::release);
                assertTrue(round < 10 * N, "no progress");
            }
            p.drive();
            assertTrue(sent.get());
            List<Integer> sorted = new ArrayList<>(values);
            sorted.sort(null);
            assertEquals(N, values.size());
            for (int i = 0; i < N; i++) {
                assertEquals(i, sorted.get(i), "exactly once");
            }
            assertTrue(p.client.metrics().maxOutstandingRequest() <= RECEIVE_BUFFERS + SEND_QUEUE);
        }
    }
}
