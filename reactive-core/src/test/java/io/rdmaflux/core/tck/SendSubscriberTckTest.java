package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaMessage;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * The Reactive Streams TCK (blackbox) against the subscriber {@code RdmaConnection.send(publisher)}
 * puts on the user's publisher. The peer receives and releases everything.
 */
class SendSubscriberTckTest {
    private final List<TckPair> pairs = new ArrayList<>();

    @TestFactory
    Stream<DynamicTest> sendSideIsAReactiveStreamsSubscriber() {
        SubscriberBlackboxVerification<RdmaMessage> v = new SubscriberBlackboxVerification<>(new TestEnvironment(2000, 500)) {
            @Override
            public Subscriber<RdmaMessage> createSubscriber() {
                TckPair p = new TckPair();
                synchronized (pairs) {
                    pairs.add(p);
                }
                p.server.receive().subscribe(RdmaMessage::release);
                AtomicReference<Subscriber<? super RdmaMessage>> captured = new AtomicReference<>();
                Publisher<RdmaMessage> capture = captured::set;
                p.client.send(capture).subscribe(null, e -> { });
                return new ForwardingSubscriber(captured.get());
            }

            @Override
            public RdmaMessage createElement(int element) {
                return RdmaMessage.of("e" + element);
            }
        };
        return TckDriver.tests(v, this::closePairs);
    }

    private void closePairs() {
        synchronized (pairs) {
            pairs.forEach(TckPair::close);
            pairs.clear();
        }
    }

    /** The send-side subscriber as the TCK sees it (a plain Subscriber view, no added behaviour). */
    private record ForwardingSubscriber(Subscriber<? super RdmaMessage> target) implements Subscriber<RdmaMessage> {
        @Override
        public void onSubscribe(org.reactivestreams.Subscription s) {
            target.onSubscribe(s);
        }

        @Override
        public void onNext(RdmaMessage m) {
            target.onNext(m);
        }

        @Override
        public void onError(Throwable t) {
            target.onError(t);
        }

        @Override
        public void onComplete() {
            target.onComplete();
        }
    }
}
