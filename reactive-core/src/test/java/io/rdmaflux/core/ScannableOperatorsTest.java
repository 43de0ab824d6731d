package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Scannable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The send's subscriber and the receive Flux's subscription answer Reactor's {@link Scannable}
 * attributes as Reactor's own operators do. INVOKER mode, virtual time.
 */
class ScannableOperatorsTest {
    @Test
    void theReceiveSubscriptionReportsDemandBufferedMessagesAndCancellation() {
        try (InvokerPair p = InvokerPair.open()) {
            List<RdmaMessage> got = new ArrayList<>();
            AtomicReference<Subscription> sub = new AtomicReference<>();
            BaseSubscriber<RdmaMessage> subscriber = new BaseSubscriber<>() {
                @Override
                protected void hookOnSubscribe(Subscription s) {
                    sub.set(s);
                }

                @Override
                protected void hookOnNext(RdmaMessage m) {
                    got.add(m);
                }
            };
            p.server.receive().subscribe(subscriber);
            Scannable s = Scannable.from(sub.get());
            assertTrue(s.isScanAvailable());
            assertSame(subscriber, s.scanUnsafe(Scannable.Attr.ACTUAL), "the subscriber (not Scannable itself, so read raw)");
            assertEquals(0L, s.scan(Scannable.Attr.REQUESTED_FROM_DOWNSTREAM));
            subscriber.request(3);
            p.drive();
            assertEquals(3L, s.scan(Scannable.Attr.REQUESTED_FROM_DOWNSTREAM));
            p.client.send(Flux.range(0, 5).map(i -> RdmaMessage.of(new byte[] {i.byteValue()}))).subscribe();
            p.drive();
            assertEquals(3, got.size());
            assertEquals(0L, s.scan(Scannable.Attr.REQUESTED_FROM_DOWNSTREAM), "the 3 requested were delivered");
            assertEquals(0, s.scan(Scannable.Attr.BUFFERED), "credits let in only the 3 requested: nothing waits here");
            subscriber.request(1);
            p.drive();
            assertEquals(4, got.size());
            assertEquals(Boolean.FALSE, s.scan(Scannable.Attr.CANCELLED));
            got.forEach(RdmaMessage::release);
            subscriber.cancel();
            p.drive();
            assertEquals(Boolean.TRUE, s.scan(Scannable.Attr.CANCELLED));
            assertEquals(0, s.scan(Scannable.Attr.BUFFERED), "cancel released what was queued");
        }
    }

    @Test
    void theSendSubscriberReportsItsPublisherTheQueueAndTheEnd() {
        try (InvokerPair p = InvokerPair.open()) {
            p.server.receive().subscribe(RdmaMessage::release);
            AtomicReference<Subscriber<? super RdmaMessage>> sendSubscriber = new AtomicReference<>();
            Publisher<RdmaMessage> messages = s -> {
                sendSubscriber.set(s);
                Flux.range(0, 10).map(i -> RdmaMessage.of(new byte[] {i.byteValue()})).subscribe(s);
            };
            SendOutcome outcome = SendOutcome.of(p.client.send(messages));
            Scannable op = Scannable.from(sendSubscriber.get());
            assertTrue(op.isScanAvailable());
            assertTrue(op.scan(Scannable.Attr.PARENT) != null, "the publisher's subscription");
            assertTrue(op.scan(Scannable.Attr.PREFETCH) > 0);
            p.drive();
            assertTrue(outcome.completed());
            assertEquals(Boolean.TRUE, op.scan(Scannable.Attr.TERMINATED));
            assertEquals(0, op.scan(Scannable.Attr.BUFFERED));
            assertEquals(Boolean.FALSE, op.scan(Scannable.Attr.CANCELLED));
        }
    }
}
