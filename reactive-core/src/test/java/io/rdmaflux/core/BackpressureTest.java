package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
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
        // one message credit per buffer: these tests count the buffers' bound itself (MessageCreditsPerBufferTest: more)
        return InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS).sendQueue(SEND_QUEUE).creditThreshold(2).messageCreditsPerBuffer(1));
    }

    private Flux<RdmaMessage> numbered() {
        return Flux.range(0, N).doOnNext(i -> emitted.incrementAndGet())
            .map(i -> RdmaMessage.of(ByteBuffer.allocate(4).putInt(0, i)));
    }

    /** Drives the pair; a send error fails the step at once, with its cause, not as a wait for a message that never comes. */
    private static Runnable drive(InvokerPair p, SendOutcome sent) {
        return () -> {
            p.drive();
            sent.assertNoError();
        };
    }

    private static int value(RdmaMessage m) {
        int v = m.content().getInt(0, java.nio.ByteOrder.BIG_ENDIAN);
        m.release();
        return v;
    }

    @Test
    void subscriberRequestingOneAtATimeHoldsTheSenderToOnePlusItsQueue() {
        try (InvokerPair p = pair()) {
            SendOutcome sent = SendOutcome.of(p.client.send(numbered()));
            Runnable drive = drive(p, sent);
            StepVerifier.Step<Integer> step = StepVerifier.create(p.server.receive().map(BackpressureTest::value), 0)
                .then(drive)
                .then(() -> assertTrue(emitted.get() <= SEND_QUEUE, "no demand: only the send queue is taken, was " + emitted.get()));
            for (int i = 0; i < N; i++) {
                int expected = i;
                step = step.thenRequest(1).then(drive).expectNext(expected)
                    .then(() -> assertTrue(emitted.get() <= expected + 1 + 1 + SEND_QUEUE,
                        "emitted " + emitted.get() + " after " + (expected + 1) + " consumed with demand 1"));
            }
            step.then(drive).then(() -> assertTrue(sent.completed())).thenCancel().verify();
            assertTrue(p.client.metrics().maxOutstandingRequest() <= 1 + SEND_QUEUE,
                "max outstanding " + p.client.metrics().maxOutstandingRequest());
        }
    }

    @Test
    void subscriberThatStopsStopsTheSenderWithinCreditsPlusQueue() {
        try (InvokerPair p = pair()) {
            SendOutcome sent = SendOutcome.of(p.client.send(numbered()));
            Runnable drive = drive(p, sent);
            StepVerifier.create(p.server.receive().map(BackpressureTest::value), 5)
                .then(drive)
                .expectNext(0, 1, 2, 3, 4)
                .then(() -> {
                    for (int i = 0; i < 50; i++) {
                        drive.run();
                    }
                })
                .then(() -> assertTrue(emitted.get() <= 5 + SEND_QUEUE, "emitted " + emitted.get()))
                .then(() -> assertFalse(sent.completed()))
                .expectNoEvent(java.time.Duration.ZERO)
                .thenCancel()
                .verify();
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void unboundedDemandWithLateReleaseIsBoundedByReceiveBuffers() {
        try (InvokerPair p = pair()) {
            SendOutcome sent = SendOutcome.of(p.client.send(numbered()));
            Runnable drive = drive(p, sent);
            List<RdmaMessage> held = new ArrayList<>();
            // StepVerifier.create requests Long.MAX_VALUE: only the receive buffers bound what arrives
            StepVerifier.Step<RdmaMessage> step = StepVerifier.create(p.server.receive());
            for (int round = 0; round < N / RECEIVE_BUFFERS; round++) {
                int first = round * RECEIVE_BUFFERS;
                step = step.then(drive)
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
                    drive.run();
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
            step.then(drive)
                .then(() -> assertTrue(sent.completed(), "send completed"))
                .then(() -> assertEquals(N, p.server.metrics().messagesReceived(), "every message exactly once"))
                .thenCancel()
                .verify();
            assertTrue(p.client.metrics().maxOutstandingRequest() <= RECEIVE_BUFFERS + SEND_QUEUE,
                "max outstanding " + p.client.metrics().maxOutstandingRequest());
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }
}
