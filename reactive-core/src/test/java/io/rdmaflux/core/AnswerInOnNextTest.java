package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A subscriber that answers a message from its {@code onNext} (an echo, request/response, OSU's ping-pong
 * over the reactive API) hands the answer to a {@code send()} on the progress thread, in the middle of the
 * connection's duty cycle: the answer is posted to the rail in that same duty cycle, not the next one. On the
 * soft provider over IP a duty cycle is an engine pass with a socket poll, so waiting one cost about 1.3 µs
 * per 64 B round trip (issue 19). Deterministic: INVOKER nodes on the in-JVM fabric, one duty cycle at a time.
 */
class AnswerInOnNextTest {

    @Test
    void anEchoInOnNextIsPostedInTheDutyCycleThatDeliveredItsRequest() {
        try (InvokerPair p = InvokerPair.open()) {
            AtomicLong sentWhenAnswered = new AtomicLong(-1);
            AtomicInteger answered = new AtomicInteger();
            List<String> got = pingEcho(p, answered, () -> sentWhenAnswered.set(p.server.metrics().messagesSent()));

            // one pass is: both providers, the client node's duty cycle, then the server node's
            p.runUntil(() -> answered.get() == 1);

            // the pass ended with the server's duty cycle that delivered "ping" and took the answer
            assertEquals(0, sentWhenAnswered.get(), "nothing sent by the server before it answered");
            assertEquals(1, p.server.metrics().messagesSent(),
                "the answer is posted in the duty cycle that delivered the request, not the next one");
            p.runUntil(() -> got.size() == 1);
            assertEquals(List.of("echo ping"), got);
        }
    }

    /**
     * The client side of a ping-pong: its receive handler emits the next ping into a sink that feeds the same
     * connection's {@code send()}. Every ping is posted in the duty cycle that delivered the pong before it,
     * for a whole run of round trips, and every message arrives once, in order.
     */
    @Test
    void aPingEmittedFromTheReceiveHandlerIsPostedInTheSameDutyCycle() {
        int rounds = 50;
        try (InvokerPair p = InvokerPair.open()) {
            p.server.send(p.server.receive().map(m -> {
                byte[] copy = m.toByteArray();
                m.release();
                return RdmaMessage.of(copy);
            })).subscribe();
            Sinks.Many<RdmaMessage> pings = Sinks.many().unicast().onBackpressureBuffer();
            List<String> pongs = new ArrayList<>();
            List<Long> lateBy = new ArrayList<>();
            AtomicLong expectSent = new AtomicLong(1);
            p.client.receive().subscribe(m -> {
                pongs.add(m.asString());
                m.release();
                if (pongs.size() < rounds) {
                    pings.tryEmitNext(RdmaMessage.of("p" + pongs.size()));
                    expectSent.incrementAndGet();
                } else {
                    pings.tryEmitComplete();
                }
            });
            p.client.send(Mono.just(RdmaMessage.of("p0")).concatWith(pings.asFlux())).subscribe();
            for (int i = 0; i < 1_000_000 && pongs.size() < rounds; i++) {
                int before = pongs.size();
                if (p.soft.progress() + p.clientNode.invoke() > 0 && pongs.size() > before && pongs.size() < rounds) {
                    // the client's duty cycle just delivered a pong and its handler emitted the next ping
                    long sent = p.client.metrics().messagesSent();
                    if (sent != expectSent.get()) {
                        lateBy.add(expectSent.get() - sent);
                    }
                }
                if (p.serverNode.invoke() == 0) {
                    p.soft.clock().advance(1_000);
                }
            }
            assertEquals(rounds, pongs.size());
            for (int i = 0; i < rounds; i++) {
                assertEquals("p" + i, pongs.get(i));
            }
            assertTrue(lateBy.isEmpty(), "pings posted a duty cycle late: " + lateBy.size() + " of " + (rounds - 1));
        }
    }
    /**
     * A node that drives its provider hands it what the cycle posted at the end of that cycle
     * ({@code RdmaProvider.transmitPosted}): the answer leaves the server when the duty cycle that delivered
     * the request ends, and the client's very next duty cycle receives it.
     */
    @Test
    void withNodesDrivingTheirProvidersTheAnswerLeavesWhenTheDeliveringCycleEnds() {
        try (InvokerPair p = InvokerPair.open(b -> b.driveProvider(true))) {
            AtomicInteger answered = new AtomicInteger();
            List<String> got = pingEcho(p, answered, () -> { });
            for (int i = 0; i < 100_000 && answered.get() == 0; i++) {
                int work = p.clientNode.invoke();
                if (answered.get() == 0 && work + p.serverNode.invoke() == 0) {
                    p.soft.clock().advance(1_000);
                }
            }
            assertEquals(1, answered.get(), "the server answered in one of its duty cycles");
            assertTrue(got.isEmpty());
            p.clientNode.invoke();
            assertEquals(List.of("echo ping"), got, "the client's next duty cycle receives the answer");
        }
    }
    /**
     * The server answers each message with "echo " + its text from {@code onNext} (running {@code onAnswer} and
     * counting {@code answered} there); the client sends "ping". @return what the client receives, as it does
     */
    private static List<String> pingEcho(InvokerPair p, AtomicInteger answered, Runnable onAnswer) {
        p.server.send(p.server.receive().map(m -> {
            String text = m.asString();
            m.release();
            onAnswer.run();
            answered.incrementAndGet();
            return RdmaMessage.of("echo " + text);
        })).subscribe();
        List<String> got = new ArrayList<>();
        p.client.receive().subscribe(m -> {
            got.add(m.asString());
            m.release();
        });
        p.client.send(Mono.just(RdmaMessage.of("ping"))).subscribe();
        return got;
    }
}
