package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad input gets a clear error naming the value and the fix. */
class BadInputTest {

    private static void assertMentions(Throwable e, String... parts) {
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), "'" + part + "' missing from: " + e.getMessage());
        }
    }

    @Test
    void aCreditThresholdAboveTheReceiveBuffersIsRejectedNamingBothAndTheFix() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> RdmaNode.builder().receiveBuffers(4).creditThreshold(8).build());
        assertMentions(e, "creditThreshold", "receiveBuffers=4", "was 8", "raise receiveBuffers to at least 8");
    }

    @Test
    void bindConnectAndRegisterOnAClosedNodeFailNamingTheNode() {
        try (SoftTwoNodes soft = SoftTwoNodes.create()) {
            RdmaNode node = RdmaNode.builder().provider(soft.a()).name("closed-one").threadingMode(ThreadingMode.INVOKER)
                .clock(soft.clock()).build();
            PortAddress address = new PortAddress("mem", soft.a().devices().get(0).name(), 0);
            node.close();
            IllegalStateException bind = assertThrows(IllegalStateException.class, () -> node.bind(address));
            assertMentions(bind, "node closed-one is closed", "build a new RdmaNode");
            AtomicReference<Throwable> connect = new AtomicReference<>();
            node.connect(address, ConnectionSpec.defaults()).subscribe(null, connect::set);
            assertMentions(assertInstanceOf(IllegalStateException.class, connect.get()), "node closed-one is closed", "build a new RdmaNode");
            IllegalStateException register = assertThrows(IllegalStateException.class,
                () -> node.registerMemory(java.nio.ByteBuffer.allocateDirect(64)));
            assertMentions(register, "node closed-one is closed");
        }
    }

    /** A CoreSubscriber (operators, BaseSubscriber) reaches the connection's own check; a plain Subscriber Reactor's StrictSubscriber. */
    @ParameterizedTest(name = "request({0})")
    @ValueSource(longs = {0, -5})
    void requestOfNoneOrFewerOnReceiveSignalsIllegalArgumentNamingN(long n) {
        for (boolean core : new boolean[] {true, false}) {
            try (InvokerPair p = InvokerPair.open()) {
                AtomicReference<Throwable> error = new AtomicReference<>();
                AtomicInteger received = new AtomicInteger();
                Subscriber<RdmaMessage> plain = new Subscriber<>() {
                    @Override
                    public void onSubscribe(Subscription s) {
                        s.request(n);
                    }

                    @Override
                    public void onNext(RdmaMessage m) {
                        received.incrementAndGet();
                        m.release();
                    }

                    @Override
                    public void onError(Throwable t) {
                        error.set(t);
                    }

                    @Override
                    public void onComplete() {
                    }
                };
                p.server.receive().subscribe(core ? new CoreSubscriber<RdmaMessage>() {
                    @Override
                    public void onSubscribe(Subscription s) {
                        plain.onSubscribe(s);
                    }

                    @Override
                    public void onNext(RdmaMessage m) {
                        plain.onNext(m);
                    }

                    @Override
                    public void onError(Throwable t) {
                        plain.onError(t);
                    }

                    @Override
                    public void onComplete() {
                        plain.onComplete();
                    }
                } : plain);
                AtomicReference<Throwable> sendError = new AtomicReference<>();
                p.client.send(Mono.just(RdmaMessage.of("not delivered"))).subscribe(null, sendError::set);
                p.drive();
                IllegalArgumentException e = assertInstanceOf(IllegalArgumentException.class, error.get());
                if (core) {
                    assertMentions(e, "receive() of server", "request(" + n + ")", "rule 3.9", "request at least 1");
                } else {
                    assertMentions(e, "3.9", "it was " + n);
                }
                assertEquals(0, received.get());
                // the bad request ended the receive subscription (rule 3.9), so the peer refuses the send it never took
                assertMentions(assertInstanceOf(ConnectionClosedException.class, sendError.get()),
                    "1 message of this send() were not delivered", "the peer closed its inbound side", "got 0 of them");
            }
        }
    }

    @Test
    void closingANodeFromItsOwnProgressThreadIsRefusedNamingTheFixAndClosesNothing() {
        try (InvokerPair p = InvokerPair.open()) {
            AtomicReference<Throwable> fromCallback = new AtomicReference<>();
            java.util.List<String> got = new java.util.ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
                try {
                    // a Reactor signal runs on the node's progress thread: closing here would free what the
                    // duty cycle goes on using once this returns
                    p.serverNode.close();
                } catch (Throwable t) {
                    fromCallback.set(t);
                }
            });
            SendOutcome first = SendOutcome.of(p.client.send(Mono.just(RdmaMessage.of("first"))));
            p.runUntil(() -> first.completed() && got.size() == 1);
            IllegalStateException e = assertInstanceOf(IllegalStateException.class, fromCallback.get());
            assertTrue(e.getMessage().contains("close() of node " + p.serverNode.name() + " was called on its progress thread")
                && e.getMessage().contains("subscribeOn(Schedulers.boundedElastic())"), e.getMessage());
            assertTrue(!p.serverNode.isClosed(), "the refused close closed nothing");
            SendOutcome second = SendOutcome.of(p.client.send(Mono.just(RdmaMessage.of("second"))));
            p.runUntil(() -> second.completed() && got.size() == 2);
            assertEquals(java.util.List.of("first", "second"), got, "the connection still carries messages");
        }
    }
}
