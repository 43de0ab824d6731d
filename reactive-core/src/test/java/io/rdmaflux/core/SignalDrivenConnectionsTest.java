package io.rdmaflux.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Idle connections are cold in their node's engine (a busy duty cycle skips them) and come back at once when
 * work reaches them: a message sent on a cold connection while another one streams is delivered within a few
 * duty cycles, not after the engine's rotation has come round to it (about one cycle per connection).
 */
class SignalDrivenConnectionsTest {
    private static final int CONNECTIONS = 48;

    /** Other work on an engine: every cycle is busy, so no idle sweep visits the cold connections. */
    private static io.rdmaflux.verbs.ProgressAgent busyAgent() {
        return new io.rdmaflux.verbs.ProgressAgent() {
            @Override
            public int doWork(long nowNs) {
                return 1;
            }

            @Override
            public String roleName() {
                return "busy";
            }
        };
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"per-connection CQs", "one shared CQ + SRQ"})
    void aColdConnectionIsVisitedAsSoonAsWorkReachesItWhileAnotherStreams(String mode) {
        Consumer<RdmaNode.Builder> config = mode.startsWith("one")
            ? b -> b.sharedCompletionQueue(CONNECTIONS).sharedReceiveQueue(512).receiveBuffers(8).sendBuffers(8)
            : b -> b.receiveBuffers(8).sendBuffers(8).controlBuffers(4).rendezvousBuffers(1);
        try (InvokerPeers p = new InvokerPeers(config)) {
            List<RdmaConnection[]> cs = new ArrayList<>();
            List<AtomicInteger> received = new ArrayList<>();
            for (int i = 0; i < CONNECTIONS; i++) {
                RdmaConnection[] c = p.connect(ConnectionSpec.defaults());
                cs.add(c);
                AtomicInteger n = new AtomicInteger();
                received.add(n);
                c[1].receive().subscribe(m -> {
                    n.incrementAndGet();
                    m.release();
                });
            }
            p.drive();
            for (int i = 0; i < 20; i++) {
                // more idle visits than it takes to turn cold (16)
                p.pass();
            }
            for (RdmaConnection[] c : cs) {
                assertTrue(p.clientNode.engine().isCold((DefaultRdmaConnection) c[0]), c[0] + " idle but not cold");
                assertTrue(p.serverNode.engine().isCold((DefaultRdmaConnection) c[1]), c[1] + " idle but not cold");
            }
            // other work on both engines (a cycle that finds nothing to do visits every agent, in INVOKER mode): a
            // busy cycle reaches a cold connection only through its signal or, without one, by the rotation
            io.rdmaflux.verbs.ProgressAgent busy = busyAgent();
            p.clientNode.engine().add(busy);
            p.serverNode.engine().add(busy);
            // connection 0 streams for far longer than the check below takes
            int streamed = 200_000;
            SendOutcome stream = SendOutcome.of(cs.get(0)[0].send(Flux.range(0, streamed).map(i -> RdmaMessage.of("s" + i))));
            for (int i = 0; i < 50; i++) {
                p.pass();
            }
            assertFalse(p.serverNode.engine().isCold((DefaultRdmaConnection) cs.get(0)[1]), "the streaming connection is hot");
            int last = CONNECTIONS - 1;
            assertTrue(p.serverNode.engine().isCold((DefaultRdmaConnection) cs.get(last)[1]));
            SendOutcome one = SendOutcome.of(cs.get(last)[0].send(Flux.just(RdmaMessage.of("to the cold one"))));
            int passes = 0;
            while (received.get(last).get() == 0 && passes < 1_000) {
                p.pass();
                passes++;
            }
            assertEquals(1, received.get(last).get());
            // send posted on the client's first visit, frame through the fabric, completion signalled on the server:
            // a handful of passes; the rotation alone would take about one pass per connection
            assertTrue(passes <= 8, "delivered after " + passes + " passes of " + CONNECTIONS + " connections");
            assertTrue(received.get(0).get() < streamed, "the stream was still going");
            p.clientNode.engine().remove(busy);
            p.serverNode.engine().remove(busy);
            p.runUntil(() -> stream.completed() && one.completed() && received.get(0).get() == streamed);
            assertNull(stream.error());
            assertNull(one.error());
        }
    }

    /**
     * The node's rendezvous buffers are shared by its connections: a cold connection whose large message waits
     * for one is signalled when another connection's subscriber releases the message holding it, rather than
     * found by the rotation about one pass per connection later.
     */
    @org.junit.jupiter.api.Test
    void aColdConnectionWaitingForASharedRendezvousBufferIsSignalledWhenOneIsFreed() {
        int large = 64 * 1024;
        try (InvokerPeers p = new InvokerPeers(b -> b.receiveBuffers(8).sendBuffers(8).controlBuffers(4).rendezvousBuffers(1)
            .maxMessageBytes(large))) {
            List<RdmaConnection[]> cs = new ArrayList<>();
            List<List<RdmaMessage>> held = new ArrayList<>();
            for (int i = 0; i < CONNECTIONS; i++) {
                RdmaConnection[] c = p.connect(ConnectionSpec.defaults());
                cs.add(c);
                List<RdmaMessage> h = new ArrayList<>();
                held.add(h);
                c[1].receive().subscribe(h::add);
            }
            p.drive();
            io.rdmaflux.verbs.ProgressAgent busy = busyAgent();
            p.clientNode.engine().add(busy);
            p.serverNode.engine().add(busy);
            int last = CONNECTIONS - 1;
            SendOutcome first = SendOutcome.of(cs.get(0)[0].send(Flux.just(RdmaMessage.of(new byte[large]))));
            p.runUntil(() -> held.get(0).size() == 1);
            SendOutcome second = SendOutcome.of(cs.get(last)[0].send(Flux.just(RdmaMessage.of(new byte[large]))));
            for (int i = 0; i < 200; i++) {
                p.pass();
            }
            assertTrue(held.get(last).isEmpty(), "the node's only rendezvous buffer is held by connection 0's subscriber");
            assertTrue(p.serverNode.engine().isCold((DefaultRdmaConnection) cs.get(last)[1]), "the waiting connection is cold");
            held.get(0).get(0).release();
            int passes = 0;
            while (held.get(last).isEmpty() && passes < 1_000) {
                p.pass();
                passes++;
            }
            assertEquals(1, held.get(last).size());
            assertTrue(passes <= 8, "the waiting connection got the freed buffer after " + passes + " passes");
            held.get(last).get(0).release();
            p.clientNode.engine().remove(busy);
            p.serverNode.engine().remove(busy);
            p.runUntil(() -> first.completed() && second.completed());
        }
    }
}
