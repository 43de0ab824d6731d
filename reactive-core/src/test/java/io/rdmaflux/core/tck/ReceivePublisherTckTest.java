package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

import java.util.Objects;
import java.util.stream.Stream;

/**
 * The Reactive Streams TCK against {@code RdmaConnection.receive()}: the publisher is the
 * receiving side of a connection whose peer sends {@code elements} messages and closes gracefully.
 */
class ReceivePublisherTckTest {
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
    Stream<DynamicTest> receiveIsAReactiveStreamsPublisher() {
        PublisherVerification<RdmaMessage> v = new PublisherVerification<>(new TestEnvironment(2000, 500)) {
            @Override
            public Publisher<RdmaMessage> createPublisher(long elements) {
                TckNodes.Pair p = nodes.open();
                p.client.send(Flux.range(0, (int) elements).map(i -> RdmaMessage.of("m" + i)))
                    .doFinally(s -> p.client.close()).subscribe();
                return new ReleasingPublisher(p.server.receive());
            }

            @Override
            public Publisher<RdmaMessage> createFailedPublisher() {
                TckNodes.Pair p = nodes.open();
                p.client.abort();
                p.server.onClose().block(java.time.Duration.ofSeconds(10));
                return p.server.receive();
            }

            @Override
            public long maxElementsFromPublisher() {
                return 32;
            }
        };
        return TckDriver.tests(v, nodes::abortConnections);
    }

    /**
     * The receive publisher as the TCK sees it, releasing each message once the TCK's subscriber had it:
     * the TCK only counts messages and never releases them, which would leak. The TCK's subscriber gets
     * the connection's own {@code Subscription}, so every request and cancel reaches the publisher under
     * test unchanged.
     */
    private record ReleasingPublisher(Publisher<RdmaMessage> source) implements Publisher<RdmaMessage> {
        @Override
        public void subscribe(Subscriber<? super RdmaMessage> s) {
            Objects.requireNonNull(s, "subscriber (Reactive Streams rule 1.9)");
            source.subscribe(new Subscriber<RdmaMessage>() {
                @Override
                public void onSubscribe(Subscription subscription) {
                    s.onSubscribe(subscription);
                }

                @Override
                public void onNext(RdmaMessage m) {
                    try {
                        s.onNext(m);
                    } finally {
                        m.release();
                    }
                }

                @Override
                public void onError(Throwable t) {
                    s.onError(t);
                }

                @Override
                public void onComplete() {
                    s.onComplete();
                }
            });
        }
    }
}
