package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A send publisher that offers Reactor's SYNC fusion ({@code Flux.range(..).map(..)}) is polled by the
 * progress thread instead of being requested from: no {@code request} reaches it, and everything a
 * requested publisher guarantees still holds (order, the credits-plus-queue bound with a stalled
 * receiver, errors thrown by the user's operators, cancellation of an endless source).
 */
class SyncFusionTest {
    private static final int RECEIVE_BUFFERS = 8;
    private static final int SEND_QUEUE = 4;

    private static InvokerPair open() {
        // one message credit per buffer: the stalled receiver's bound below is the buffers' own
        return InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS).sendQueue(SEND_QUEUE).messageCreditsPerBuffer(1));
    }

    @Test
    void aFusedSourceIsPolledNeverRequestedAndArrivesInOrder() {
        int count = 500;
        try (InvokerPair p = open()) {
            List<String> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(new String(m.toByteArray(), StandardCharsets.UTF_8));
                m.release();
            });
            AtomicLong requests = new AtomicLong();
            // doOnRequest keeps SYNC fusion (FluxPeekFuseable): its hook runs only if request() is called
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, count).doOnRequest(requests::addAndGet)
                .map(i -> RdmaMessage.of("m" + i))));
            p.runUntil(() -> sent.completed() && got.size() == count);
            assertEquals(0, requests.get(), "fused: the progress thread polls, it never requests");
            for (int i = 0; i < count; i++) {
                assertEquals("m" + i, got.get(i), "message " + i);
            }
        }
    }

    @Test
    void aStalledReceiverStopsTheFusedSourceAtCreditsPlusQueue() {
        try (InvokerPair p = open()) {
            List<RdmaMessage> held = new ArrayList<>();
            boolean[] stalled = {true};
            p.server.receive().subscribe(m -> {
                if (stalled[0]) {
                    held.add(m);
                } else {
                    m.release();
                }
            });
            AtomicInteger pulled = new AtomicInteger();
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 10_000).map(i -> {
                pulled.incrementAndGet();
                return RdmaMessage.of(new byte[] {i.byteValue()});
            })));
            p.drive();
            assertEquals(RECEIVE_BUFFERS, held.size(), "the receiver holds every buffer");
            assertTrue(pulled.get() <= RECEIVE_BUFFERS + SEND_QUEUE,
                "pulled " + pulled.get() + " from the source with " + RECEIVE_BUFFERS + " credits and a send queue of " + SEND_QUEUE);
            assertEquals(RECEIVE_BUFFERS + SEND_QUEUE, pulled.get(), "the queue is filled while the receiver stalls");
            sent.assertNoError();
            stalled[0] = false;
            held.forEach(RdmaMessage::release);
            p.runUntil(sent::completed);
            assertEquals(10_000, pulled.get());
        }
    }

    @Test
    void anOperatorThrowingInAPollFailsTheSendAfterTheMessagesBeforeItAndTheConnectionGoesOn() {
        try (InvokerPair p = open()) {
            List<String> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(new String(m.toByteArray(), StandardCharsets.UTF_8));
                m.release();
            });
            IllegalStateException boom = new IllegalStateException("boom at 3");
            AtomicReference<Throwable> error = new AtomicReference<>();
            AtomicLong deliveredAtError = new AtomicLong(-1);
            p.client.send(Flux.range(0, 10).map(i -> {
                if (i == 3) {
                    throw boom;
                }
                return RdmaMessage.of("a" + i);
            })).subscribe(null, e -> {
                deliveredAtError.set(p.client.metrics().messagesDelivered());
                error.set(e);
            });
            p.runUntil(() -> error.get() != null);
            assertSame(boom, error.get());
            assertEquals(List.of("a0", "a1", "a2"), got, "the messages before the error are delivered");
            assertEquals(3, deliveredAtError.get(), "the send fails once they were delivered (RC completions), not before");

            SendOutcome next = SendOutcome.of(p.client.send(Flux.range(0, 3).map(i -> RdmaMessage.of("b" + i))));
            p.runUntil(() -> next.completed() && got.size() == 6);
            assertEquals(List.of("a0", "a1", "a2", "b0", "b1", "b2"), got);
        }
    }

    @Test
    void aNullFromTheUsersMapperFailsTheSendNamingIt() {
        try (InvokerPair p = open()) {
            p.server.receive().subscribe(RdmaMessage::release);
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.range(0, 3).map(i -> i == 1 ? null : RdmaMessage.of("x"))).subscribe(null, error::set);
            p.runUntil(() -> error.get() != null);
            NullPointerException e = assertInstanceOf(NullPointerException.class, error.get());
            assertTrue(e.getMessage().contains("null message") && e.getMessage().contains("send()"), e.getMessage());
        }
    }

    @Test
    void cancellingTheSendOfAnEndlessFusedSourceStopsPollingIt() {
        try (InvokerPair p = open()) {
            AtomicLong delivered = new AtomicLong();
            p.server.receive().subscribe(m -> {
                m.release();
                delivered.incrementAndGet();
            });
            AtomicLong pulled = new AtomicLong();
            AtomicReference<Throwable> error = new AtomicReference<>();
            var send = p.client.send(Flux.range(0, Integer.MAX_VALUE).map(i -> {
                pulled.incrementAndGet();
                return RdmaMessage.of("e");
            })).subscribe(null, error::set);
            p.runUntil(() -> delivered.get() >= 100);
            send.dispose();
            p.drive();
            long after = pulled.get();
            p.drive();
            assertEquals(after, pulled.get(), "nothing is pulled after the cancel");
            assertNull(error.get(), "a cancelled Mono signals nothing");
            // whatever was pulled was either delivered or released by the connection (the leak check at the end)
            assertTrue(after - delivered.get() <= RECEIVE_BUFFERS + SEND_QUEUE, "pulled " + after + ", delivered " + delivered.get());
        }
    }

    /**
     * A fused source whose last message is the last one the connection asked for is done then (its queue
     * is empty), not only at the next poll: a refusal after it says the messages were not delivered
     * without "its publisher was cancelled" (seen in CloseSemanticsPropertyTest).
     */
    @Test
    void aFusedSourceTakenToItsLastMessageIsDoneWithoutAnotherPoll() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(2).sendQueue(2))) {
            List<RdmaMessage> held = new ArrayList<>();
            HoldingSubscriber sub = new HoldingSubscriber(2, held);
            p.server.receive().subscribe(sub);
            java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
            // credits 2 + queue 2: the connection asks for exactly the source's 4 messages
            p.client.send(Flux.range(0, 4).map(i -> RdmaMessage.of("m" + i))).subscribe(null, error::set);
            p.drive();
            assertEquals(2, held.size());
            sub.cancel();
            p.drive();
            String m = String.valueOf(error.get());
            assertTrue(m.contains("2 messages of this send() were not delivered: the peer closed its inbound side")
                && m.contains("after its subscriber got 2 of them"), m);
            held.forEach(RdmaMessage::release);
        }
    }

    /**
     * The fused source's completion hooks run when the connection learns from an empty queue that the
     * source is done: a {@code doOnComplete} fires and a {@code Flux.fromStream} Stream is closed (a
     * reviewer found both skipped when the connection stopped polling after isEmpty()).
     */
    @Test
    void aFusedSourceTakenToItsLastMessageRunsItsCompletionHooks() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(2).sendQueue(2))) {
            List<String> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            });
            java.util.concurrent.atomic.AtomicBoolean completeHook = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicBoolean streamClosed = new java.util.concurrent.atomic.AtomicBoolean();
            // credits 2 + queue 2: the connection asks for exactly the source's 4 messages
            SendOutcome sent = SendOutcome.of(p.client.send(
                Flux.fromStream(java.util.stream.Stream.of(0, 1, 2, 3).onClose(() -> streamClosed.set(true)))
                    .map(i -> RdmaMessage.of("m" + i))
                    .doOnComplete(() -> completeHook.set(true))));
            p.runUntil(() -> sent.completed() && got.size() == 4);
            assertEquals(List.of("m0", "m1", "m2", "m3"), got);
            assertTrue(completeHook.get(), "doOnComplete of the fused source ran");
            assertTrue(streamClosed.get(), "the source's Stream was closed");
        }
    }
}
