package io.rdmaflux.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Messages a send took from its publisher and will never transmit go through the send subscriber's
 * discard hook ({@code send(..).doOnDiscard(RdmaMessage.class, ..)}), as Reactor's own operators do, and
 * are then released unless the hook released them: no message is released twice or stranded, and a
 * reference the caller kept ({@code retain()}) survives a hook that releases (the leak
 * check of {@code RdmaLeakCheckExtension} runs after every test). Fused ({@code Flux.range().map()}) and
 * unfused ({@code hide()}) publishers; INVOKER mode.
 */
class SendDiscardTest {

    @ParameterizedTest(name = "fused: {0}, the hook releases: {1}, the caller kept a reference: {2}")
    @CsvSource({"true, false, false", "true, true, false", "false, false, false", "false, true, false",
        "true, true, true", "false, true, true", "false, false, true"})
    void messagesQueuedWhenTheSendIsCancelledGoThroughTheDiscardHookOnce(boolean fused, boolean hookReleases, boolean retained) {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(4).sendQueue(4))) {
            List<String> got = new ArrayList<>();
            // takes 2 and holds on: the sender fills its credits and its queue, then waits
            p.server.receive().subscribe(new BaseSubscriber<>() {
                @Override
                protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                    s.request(2);
                }

                @Override
                protected void hookOnNext(RdmaMessage m) {
                    got.add(m.asString());
                    m.release();
                }
            });
            AtomicInteger emitted = new AtomicInteger();
            List<String> discarded = new ArrayList<>();
            List<RdmaMessage> created = new ArrayList<>();
            Flux<RdmaMessage> source = Flux.range(0, 1_000).map(i -> {
                RdmaMessage m = RdmaMessage.of("m" + i);
                if (retained) {
                    created.add(m.retain());
                }
                return m;
            });
            Flux<RdmaMessage> messages = (fused ? source : source.hide()).doOnNext(m -> emitted.incrementAndGet());
            Disposable send = p.client.send(messages)
                .doOnDiscard(RdmaMessage.class, m -> {
                    discarded.add(m.asString());
                    if (hookReleases) {
                        m.release();
                    }
                })
                .subscribe();
            p.drive();
            assertEquals(List.of("m0", "m1"), got);
            int taken = emitted.get();
            assertTrue(taken > 2 && taken < 1_000, "the sender took credits plus its queue, not the whole publisher: " + taken);
            long transmitted = p.client.metrics().messagesSent();
            assertTrue(transmitted < taken, "some messages wait in the send queue: sent " + transmitted + " of " + taken);

            send.dispose();
            p.drive();
            List<String> expected = new ArrayList<>();
            for (long i = transmitted; i < taken; i++) {
                expected.add("m" + i);
            }
            assertEquals(expected, discarded, "each message taken and never transmitted, once, in order");
            assertEquals(taken, emitted.get(), "nothing more was taken after the cancel");
            for (RdmaMessage m : created) {
                // the send's reference is gone, sent or discarded; the caller's is intact
                assertEquals(1, m.refCnt(), () -> m.asString() + " lost the reference the caller kept");
                m.release();
            }
        }
    }

    @ParameterizedTest(name = "the hook releases: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void aSendOnAClosedConnectionDiscardsEachMessageThroughTheHookAndFails(boolean hookReleases) {
        try (InvokerPair p = InvokerPair.open()) {
            p.client.close();
            p.drive();
            List<String> discarded = new ArrayList<>();
            RdmaMessage a = RdmaMessage.of("a");
            RdmaMessage b = RdmaMessage.of("b");
            java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
            p.client.send(Flux.just(a, b))
                .doOnDiscard(RdmaMessage.class, m -> {
                    discarded.add(m.asString());
                    if (hookReleases) {
                        m.release();
                    }
                })
                .subscribe(null, error::set);
            assertTrue(error.get() instanceof ConnectionClosedException, String.valueOf(error.get()));
            assertEquals(List.of("a", "b"), discarded);
            assertEquals(0, a.refCnt() + b.refCnt(), "each message released once");
        }
    }

    @org.junit.jupiter.api.Test
    void aSendOnAClosedConnectionEndsAnEndlessPublisherAfterTheDrainLimit() {
        try (InvokerPair p = InvokerPair.open()) {
            p.client.close();
            p.drive();
            AtomicInteger emitted = new AtomicInteger();
            java.util.concurrent.atomic.AtomicBoolean cancelled = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
            // before, the drain requested Long.MAX_VALUE and this never returned
            p.client.send(Flux.<RdmaMessage>generate(sink -> sink.next(RdmaMessage.of("x" + emitted.incrementAndGet())))
                    .doOnCancel(() -> cancelled.set(true)))
                .subscribe(null, error::set);
            assertTrue(error.get() instanceof ConnectionClosedException, String.valueOf(error.get()));
            assertEquals(SendOps.CLOSED_SEND_DRAIN_LIMIT, emitted.get(), "taken up to the limit, then cancelled");
            assertTrue(cancelled.get());
        }
    }

    @org.junit.jupiter.api.Test
    void aHookThatRetainsAMessageKeepsItsOwnReferenceAndTheSendsIsReleased() {
        try (InvokerPair p = InvokerPair.open()) {
            p.client.close();
            p.drive();
            List<RdmaMessage> kept = new ArrayList<>();
            RdmaMessage a = RdmaMessage.of("a");
            p.client.send(Flux.just(a)).doOnDiscard(RdmaMessage.class, m -> kept.add(m.retain())).subscribe(null, e -> { });
            assertEquals(List.of(a), kept);
            assertEquals(1, a.refCnt(), "the hook's reference only: the send's was released");
            a.release();
        }
    }
}
