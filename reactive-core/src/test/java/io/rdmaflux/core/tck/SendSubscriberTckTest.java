package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;

import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * The Reactive Streams TCK (blackbox) against the subscriber {@code RdmaConnection.send(publisher)}
 * puts on the user's publisher. The peer receives and releases everything.
 */
class SendSubscriberTckTest {
    private static TckNodes nodes;
    private static VerbsLeakCheck leaks;

    @BeforeAll
    static void openNodes() {
        leaks = VerbsLeakCheck.begin();
        nodes = new TckNodes();
    }

    @AfterAll
    static void closeNodes() {
        nodes.close();
        leaks.assertClean();
    }

    @TestFactory
    Stream<DynamicTest> sendSideIsAReactiveStreamsSubscriber() {
        SubscriberBlackboxVerification<RdmaMessage> v = new SubscriberBlackboxVerification<>(TckNodes.environment()) {
            @Override
            public Subscriber<RdmaMessage> createSubscriber() {
                TckNodes.Pair p = nodes.open();
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
        return TckDriver.tests(v, nodes::abortConnections);
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
