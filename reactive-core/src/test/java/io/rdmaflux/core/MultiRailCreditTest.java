package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.Subchannel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Credits of a connection over several rails: demand is granted once per connection (message
 * credits), never once per rail, so at most the outstanding demand can arrive whatever the rail
 * count; and a scheduler that uses one rail only is never starved by where credit was granted.
 */
class MultiRailCreditTest {
    private static final int RECEIVE_BUFFERS = 8;
    private static final int SEND_QUEUE = 4;
    private static final int N = 60;

    private final AtomicInteger emitted = new AtomicInteger();

    private InvokerPair pair(int rails, ChannelFactory factory) {
        return InvokerPair.open(rails, ConnectionSpec.rails(rails).striping(factory),
            b -> b.receiveBuffers(RECEIVE_BUFFERS).sendQueue(SEND_QUEUE).creditThreshold(2));
    }

    private Flux<RdmaMessage> numbered() {
        return Flux.range(0, N).doOnNext(i -> emitted.incrementAndGet())
            .map(i -> RdmaMessage.write(4, (buf, off, len) -> buf.putInt(off, i)));
    }

    /** Drives the pair; a send error fails the step at once, with its cause, not as a wait for a message that never comes. */
    private static Runnable drive(InvokerPair p, SendOutcome sent) {
        return () -> {
            p.drive();
            sent.assertNoError();
        };
    }

    private static int value(RdmaMessage m) {
        int v = m.content().getInt(0);
        m.release();
        return v;
    }

    @ParameterizedTest(name = "{0} rails")
    @ValueSource(ints = {2, 3})
    void requestingOneAtATimeLetsAtMostTheDemandArriveOverAllRails(int rails) {
        try (InvokerPair p = pair(rails, ChannelFactory.roundRobin())) {
            SendOutcome sent = SendOutcome.of(p.client.send(numbered()));
            Runnable drive = drive(p, sent);
            StepVerifier.Step<Integer> step = StepVerifier.create(p.server.receive().map(MultiRailCreditTest::value), 0)
                .then(drive)
                .then(() -> assertEquals(0, p.client.metrics().messagesDelivered(), "no demand, nothing arrives"));
            for (int i = 0; i < N; i++) {
                int expected = i;
                step = step.thenRequest(1).then(drive).expectNext(expected)
                    .then(() -> assertTrue(p.client.metrics().messagesDelivered() <= expected + 1,
                        "arrived " + p.client.metrics().messagesDelivered() + " with total demand " + (expected + 1)))
                    .then(() -> assertTrue(p.client.metrics().sendCredits() <= 1, "credits held " + p.client.metrics().sendCredits()));
            }
            step.then(drive).then(() -> assertTrue(sent.completed())).thenCancel().verify();
            assertTrue(p.client.metrics().maxOutstandingRequest() <= 1 + SEND_QUEUE,
                "max outstanding " + p.client.metrics().maxOutstandingRequest());
            for (Subchannel sc : p.client.subchannels()) {
                assertTrue(sc.bytesSent() > 0, "round robin used rail " + sc.rail());
            }
        }
    }

    @ParameterizedTest(name = "{0} rails")
    @ValueSource(ints = {2, 3})
    void stalledSubscriberHoldsArrivalsToItsDemandAndTheSenderToDemandPlusQueue(int rails) {
        try (InvokerPair p = pair(rails, ChannelFactory.roundRobin())) {
            SendOutcome sent = SendOutcome.of(p.client.send(numbered()));
            Runnable drive = drive(p, sent);
            StepVerifier.create(p.server.receive().map(MultiRailCreditTest::value), 5)
                .then(drive)
                .expectNext(0, 1, 2, 3, 4)
                .then(() -> {
                    for (int i = 0; i < 50; i++) {
                        drive.run();
                    }
                })
                .then(() -> assertEquals(5, p.client.metrics().messagesDelivered(),
                    "with " + rails + " rails exactly the demand of 5 arrived, not " + rails + " x 5"))
                .then(() -> assertTrue(emitted.get() <= 5 + SEND_QUEUE, "emitted " + emitted.get()))
                .then(() -> assertFalse(sent.completed()))
                .thenRequest(3)
                .then(drive)
                .expectNext(5, 6, 7)
                .then(() -> assertEquals(8, p.client.metrics().messagesDelivered()))
                .thenCancel()
                .verify();
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @ParameterizedTest(name = "{0} rails")
    @ValueSource(ints = {2, 3})
    void aSchedulerBoundToTheLastRailProgressesWithDemandOfOne(int rails) {
        int last = rails - 1;
        ChannelFactory bound = subchannels -> (psn, lengthBytes, s) -> s[last].canSend() ? last : -1;
        try (InvokerPair p = pair(rails, bound)) {
            SendOutcome sent = SendOutcome.of(p.client.send(numbered()));
            Runnable drive = drive(p, sent);
            StepVerifier.Step<Integer> step = StepVerifier.create(p.server.receive().map(MultiRailCreditTest::value), 0);
            for (int i = 0; i < N; i++) {
                step = step.thenRequest(1).then(drive).expectNext(i);
            }
            step.then(drive).then(() -> assertTrue(sent.completed())).thenCancel().verify();
            for (Subchannel sc : p.client.subchannels()) {
                assertEquals(sc.rail() == last ? 4L * N : 0L, sc.bytesSent(), "rail " + sc.rail());
            }
        }
    }
}
