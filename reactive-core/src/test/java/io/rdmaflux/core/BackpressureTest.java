package io.rdmaflux.core;

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

    private final AtomicInteger emitted = new AtomicInteger();

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
            // StepVerifier.create requests Long.MAX_VALUE: only the receive buffers bound what arrives
            StepVerifier.Step<RdmaMessage> step = StepVerifier.create(p.server.receive());
            for (int round = 0; round < N / RECEIVE_BUFFERS; round++) {
                int first = round * RECEIVE_BUFFERS;
                step = step.then(p::drive)
                    .then(() -> assertEquals(first + RECEIVE_BUFFERS, p.server.metrics().messagesReceived(),
                        "with every earlier message released, exactly the " + RECEIVE_BUFFERS + " receive buffers' worth arrives"));
                for (int k = 0; k < RECEIVE_BUFFERS; k++) {
                    int expected = first + k;
                    step = step.consumeNextWith(m -> {
                        assertEquals(expected, m.content().getInt(0, java.nio.ByteOrder.BIG_ENDIAN), "PSN order");
                        held.add(m);
                    });
                }
                step = step.then(() -> {
                    // more drives change nothing while the messages are held
                    p.drive();
                    assertEquals(first + RECEIVE_BUFFERS, p.server.metrics().messagesReceived());
                    assertTrue(emitted.get() - first <= RECEIVE_BUFFERS + SEND_QUEUE,
                        "taken from the publisher and not released: " + (emitted.get() - first) + " > credits + queue");
                    // release late and out of order: newest first
                    for (int i = held.size() - 1; i >= 0; i--) {
                        held.get(i).release();
                    }
                    held.clear();
                });
            }
            step.then(p::drive)
                .then(() -> assertTrue(sent.get(), "send completed"))
                .then(() -> assertEquals(N, p.server.metrics().messagesReceived(), "every message exactly once"))
                .thenCancel()
                .verify();
            assertTrue(p.client.metrics().maxOutstandingRequest() <= RECEIVE_BUFFERS + SEND_QUEUE,
                "max outstanding " + p.client.metrics().maxOutstandingRequest());
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }
}
