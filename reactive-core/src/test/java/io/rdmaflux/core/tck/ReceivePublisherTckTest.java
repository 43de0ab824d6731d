package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaMessage;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The Reactive Streams TCK against {@code RdmaConnection.receive()}: the publisher is the
 * receiving side of a connection whose peer sends {@code elements} messages and closes gracefully.
 */
class ReceivePublisherTckTest {
    private final List<TckPair> pairs = new ArrayList<>();

    @TestFactory
    Stream<DynamicTest> receiveIsAReactiveStreamsPublisher() {
        PublisherVerification<RdmaMessage> v = new PublisherVerification<>(new TestEnvironment(2000, 500)) {
            @Override
            public Publisher<RdmaMessage> createPublisher(long elements) {
                TckPair p = new TckPair();
                synchronized (pairs) {
                    pairs.add(p);
                }
                p.client.send(Flux.range(0, (int) elements).map(i -> RdmaMessage.of("m" + i)))
                    .doFinally(s -> p.client.close()).subscribe();
                return p.server.receive();
            }

            @Override
            public Publisher<RdmaMessage> createFailedPublisher() {
                TckPair p = new TckPair();
                synchronized (pairs) {
                    pairs.add(p);
                }
                p.client.abort();
                p.server.onClose().block(java.time.Duration.ofSeconds(10));
                return p.server.receive();
            }

            @Override
            public long maxElementsFromPublisher() {
                return 32;
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
}
