package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

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
                return p.server.receive();
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
}
