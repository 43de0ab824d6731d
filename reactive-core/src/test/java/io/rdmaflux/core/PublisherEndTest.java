package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * How a send ends when its publisher errs, and a message that arrives after its send ended: the
 * messages emitted before {@code onError} are sent and delivered and the send then fails with the
 * error (Reactive Streams orders onError after them); a message an {@code onNext} racing the end of
 * the send queues after the connection drained it is released, not stranded.
 */
class PublisherEndTest {

    @Test
    void aPublisherErrorFailsTheSendOnceTheMessagesBeforeItWereDelivered() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(4).sendQueue(2))) {
            List<String> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(new String(m.toByteArray(), StandardCharsets.UTF_8));
                m.release();
            });
            IllegalStateException boom = new IllegalStateException("upstream failed");
            AtomicReference<Throwable> error = new AtomicReference<>();
            AtomicLong deliveredAtError = new AtomicLong(-1);
            // concatWith is not fuseable: the messages come through onNext, more of them than the credits
            p.client.send(Flux.range(0, 9).map(i -> RdmaMessage.of("m" + i)).concatWith(Mono.error(boom)))
                .subscribe(null, e -> {
                    deliveredAtError.set(p.client.metrics().messagesDelivered());
                    error.set(e);
                });
            p.runUntil(() -> error.get() != null);
            assertSame(boom, error.get());
            assertEquals(9, deliveredAtError.get(), "every message emitted before the error was delivered first");
            p.drive();
            assertEquals(List.of("m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"), got);

            SendOutcome next = SendOutcome.of(p.client.send(Mono.just(RdmaMessage.of("after"))));
            p.runUntil(() -> next.completed() && got.size() == 10);
            assertEquals("after", got.get(9));
        }
    }

    @Test
    void aPublisherErrorIsKeptWhenThePeersSubscriberTookEveryMessageAndThenCancelled() {
        try (InvokerPair p = InvokerPair.open()) {
            List<String> got = new ArrayList<>();
            p.server.receive().take(3).subscribe(m -> {
                got.add(new String(m.toByteArray(), StandardCharsets.UTF_8));
                m.release();
            });
            IllegalStateException boom = new IllegalStateException("upstream failed after 3");
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.range(0, 3).map(i -> RdmaMessage.of("m" + i)).concatWith(Mono.error(boom)))
                .subscribe(null, error::set);
            p.runUntil(() -> error.get() != null);
            p.drive();
            assertEquals(List.of("m0", "m1", "m2"), got);
            assertSame(boom, error.get(), "the subscriber got every message: the send ends with the publisher's error, not a refusal");
        }
    }

    @Test
    void aPublisherErrorRidesAlongWhenTheConnectionFailsTheSendForItsOwnReason() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(2).sendQueue(1).messageCreditsPerBuffer(1))) {
            List<RdmaMessage> held = new ArrayList<>();
            p.server.receive().subscribe(held::add);
            IllegalStateException boom = new IllegalStateException("upstream failed");
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.range(0, 3).map(i -> RdmaMessage.of("m" + i)).concatWith(Mono.error(boom)))
                .subscribe(null, error::set);
            p.drive();
            assertEquals(null, error.get(), "one message waits for credit: the send is still under way");
            p.client.abort();
            p.drive();
            ConnectionClosedException e = org.junit.jupiter.api.Assertions.assertInstanceOf(ConnectionClosedException.class, error.get());
            assertEquals(List.of(boom), List.of(e.getSuppressed()), "the publisher's own error is kept: " + e);
            held.forEach(RdmaMessage::release);
        }
    }

    @Test
    void anErrorBeforeAnyMessageFailsTheSendAtOnce() {
        try (InvokerPair p = InvokerPair.open()) {
            p.server.receive().subscribe(RdmaMessage::release);
            IllegalArgumentException boom = new IllegalArgumentException("nothing to send");
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.error(boom)).subscribe(null, error::set);
            p.runUntil(() -> error.get() != null);
            assertSame(boom, error.get());
            assertEquals(0, p.client.metrics().messagesSent());
        }
    }

    /**
     * The race in {@code SendOp.onNext}: a publisher on another thread passes the op's checks, the
     * progress thread then ends the op and drains its queue, and only then the message is queued. Played
     * here in that order: the late message must be released (the leak check after the test also fails
     * on a message that stays referenced), and the queue must be empty for a drain after it.
     */
    @Test
    void aMessageQueuedAfterTheSendEndedIsReleasedNotStranded() throws Exception {
        try (InvokerPair p = InvokerPair.open()) {
            AtomicReference<MonoSink<Void>> sinkRef = new AtomicReference<>();
            Mono.<Void>create(sinkRef::set).subscribe();
            SendOp op = ConnectionProbe.newSendOp(p.client, sinkRef.get(), 8);
            op.onSubscribe(new Subscription() {
                @Override
                public void request(long n) {
                }

                @Override
                public void cancel() {
                }
            });
            RdmaMessage early = RdmaMessage.of("early");
            Thread t = new Thread(() -> op.onNext(early), "publisher");
            t.start();
            t.join();
            // the progress thread (this one: INVOKER mode) ends the op: the early message is released
            assertEquals(1, op.drainQueue());
            assertEquals(0, early.refCnt());

            RdmaMessage late = RdmaMessage.of("late");
            Thread racing = new Thread(() -> op.onNext(late), "publisher");
            racing.start();
            racing.join();
            assertEquals(0, late.refCnt(), "the late message is released by the onNext that queued it");
            assertEquals(0, op.drainQueue(), "nothing left for a later drain");
            assertNotNull(op.sink);
        }
    }
}
