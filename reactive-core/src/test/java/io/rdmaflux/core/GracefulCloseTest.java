package io.rdmaflux.core;

import io.rdmaflux.core.frame.FrameType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Graceful close when the receiving side will not take every message: no close waits forever, the
 * waiting send fails naming its connection and the messages not delivered, what was delivered stays
 * intact, nothing leaks (checked for every test by {@code RdmaLeakCheckExtension}). INVOKER mode,
 * virtual time: "completes" means within {@link #MAX_PASSES} passes.
 */
class GracefulCloseTest {
    /** Passes a close may take: the whole exchange (notice, CLOSE, FINAL each way) needs a handful. */
    private static final int MAX_PASSES = 40;

    /** Records onClose and a send's outcome. */
    private static final class Watch {
        final AtomicBoolean clientClosed = new AtomicBoolean();
        final AtomicBoolean serverClosed = new AtomicBoolean();
        final AtomicReference<Throwable> sendError = new AtomicReference<>();
        final AtomicBoolean sendCompleted = new AtomicBoolean();

        Watch(InvokerPair p) {
            p.client.onClose().subscribe(null, null, () -> clientClosed.set(true));
            p.server.onClose().subscribe(null, null, () -> serverClosed.set(true));
        }

        void send(RdmaConnection c, int messages) {
            c.send(Flux.range(0, messages).map(i -> RdmaMessage.of("m" + i))).subscribe(null, sendError::set, () -> sendCompleted.set(true));
        }

        boolean bothClosed() {
            return clientClosed.get() && serverClosed.get();
        }
    }

    private static String name(RdmaConnection c) {
        return ConnectionProbe.name(c);
    }

    /** Runs passes until both connections closed; fails naming their state after {@link #MAX_PASSES}. */
    private static int passesUntilBothClosed(InvokerPair p, Watch w) {
        for (int i = 1; i <= MAX_PASSES; i++) {
            if (p.pass() == 0) {
                p.soft.clock().advance(1_000);
            }
            if (w.bothClosed()) {
                return i;
            }
        }
        throw new AssertionError("close did not complete within " + MAX_PASSES + " passes:\n"
            + ConnectionProbe.describe(p.client) + "\n" + ConnectionProbe.describe(p.server));
    }

    /** Many passes with virtual time moving: whatever waits here waits for good. */
    private static void passMany(InvokerPair p) {
        for (int i = 0; i < 2_000; i++) {
            if (p.pass() == 0) {
                p.soft.clock().advance(1_000_000);
            }
        }
    }

    private static ConnectionClosedException notDelivered(Watch w, RdmaConnection sender, int notDelivered, int delivered) {
        ConnectionClosedException e = assertInstanceOf(ConnectionClosedException.class, w.sendError.get());
        String m = e.getMessage();
        assertTrue(m.startsWith(name(sender) + ": "), m);
        assertTrue(m.contains(notDelivered + (notDelivered == 1 ? " message" : " messages") + " of this send() were not delivered"), m);
        assertTrue(m.contains("the peer closed its inbound side") && m.contains("its subscriber got " + delivered + " of them"), m);
        assertTrue(e.byPeer(), "the peer's side decided it");
        return e;
    }

    @ParameterizedTest(name = "receiver closes first: {0}")
    @ValueSource(booleans = {true, false})
    void closingWithoutEverSubscribingFailsThePeersWaitingSendAndBothClosesComplete(boolean receiverFirst) {
        try (InvokerPair p = InvokerPair.open()) {
            Watch w = new Watch(p);
            w.send(p.client, 3);
            passMany(p);
            assertNull(w.sendError.get(), "no subscriber yet: the send waits for credit");
            assertFalse(w.sendCompleted.get());
            RdmaConnection first = receiverFirst ? p.server : p.client;
            RdmaConnection second = receiverFirst ? p.client : p.server;
            first.close();
            if (!receiverFirst) {
                passMany(p);
                assertFalse(w.clientClosed.get(), "the receiver may still subscribe: the sender's close waits for it");
                assertNull(w.sendError.get());
            }
            second.close();
            passesUntilBothClosed(p, w);
            notDelivered(w, p.client, 3, 0);
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
            AtomicReference<Throwable> late = new AtomicReference<>();
            p.server.receive().subscribe(null, late::set);
            p.drive();
            ConnectionClosedException e = assertInstanceOf(ConnectionClosedException.class, late.get());
            assertTrue(e.getMessage().contains(name(p.server) + " closed before receive() was subscribed"), e.getMessage());
        }
    }

    @Test
    void aReceiverSubscribingAfterTheSendersCloseStillGetsEveryMessage() {
        try (InvokerPair p = InvokerPair.open()) {
            Watch w = new Watch(p);
            w.send(p.client, 3);
            p.client.close();
            passMany(p);
            List<String> got = new ArrayList<>();
            AtomicBoolean completed = new AtomicBoolean();
            p.server.receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            }, null, () -> completed.set(true));
            passesUntilBothClosed(p, w);
            assertEquals(List.of("m0", "m1", "m2"), got);
            assertTrue(w.sendCompleted.get() && completed.get(), "a late subscriber was still one that takes messages");
        }
    }

    /**
     * A peer that connects and closes without sending is an empty stream: the subscriber that comes after
     * the peer's CLOSE, or after both closed, gets completion, not an error. Before, a listener
     * subscribing a moment late saw "closed before receive() was subscribed" (samples' BenchTest, in CI).
     */
    @ParameterizedTest(name = "rails: {0}, subscribe after both closed: {1}")
    @org.junit.jupiter.params.provider.CsvSource({"1, true", "1, false", "2, true", "2, false"})
    void aPeerClosingWithoutSendingIsAnEmptyCompleteStreamForALateSubscriber(int rails, boolean afterBothClosed) {
        try (InvokerPair p = InvokerPair.open(rails, ConnectionSpec.defaults(), b -> { })) {
            Watch w = new Watch(p);
            p.client.close();
            AtomicBoolean completed = new AtomicBoolean();
            AtomicReference<Throwable> error = new AtomicReference<>();
            if (afterBothClosed) {
                passesUntilBothClosed(p, w);
            } else {
                // the peer's CLOSE is in: this side's answering close is under way
                for (int i = 0; i < MAX_PASSES && p.server.metrics().framesReceived(FrameType.CLOSE) == 0; i++) {
                    p.pass();
                }
                assertTrue(p.server.metrics().framesReceived(FrameType.CLOSE) > 0 && !w.serverClosed.get(),
                    "subscribing between the peer's CLOSE and the end of the close");
            }
            p.server.receive().subscribe(m -> m.release(), error::set, () -> completed.set(true));
            passesUntilBothClosed(p, w);
            p.drive();
            assertNull(error.get(), () -> "the peer sent nothing and closed: " + error.get());
            assertTrue(completed.get(), "the late subscriber is told the stream is complete");
        }
    }

    @Test
    void closingFirstWithoutSubscribingStillFailsALateSubscriberThoughThePeerSentNothing() {
        try (InvokerPair p = InvokerPair.open()) {
            Watch w = new Watch(p);
            p.server.close();
            passesUntilBothClosed(p, w);
            AtomicReference<Throwable> late = new AtomicReference<>();
            p.server.receive().subscribe(null, late::set);
            p.drive();
            ConnectionClosedException e = assertInstanceOf(ConnectionClosedException.class, late.get());
            assertTrue(e.getMessage().contains(name(p.server) + " closed before receive() was subscribed"), e.getMessage());
        }
    }

    @ParameterizedTest(name = "receiver closes first: {0}")
    @ValueSource(booleans = {true, false})
    void cancellingReceiveFailsTheWaitingSendAtOnceAndLeavesDeliveredMessagesIntact(boolean receiverFirst) {
        try (InvokerPair p = InvokerPair.open()) {
            Watch w = new Watch(p);
            List<RdmaMessage> held = new ArrayList<>();
            HoldingSubscriber sub = new HoldingSubscriber(3, held);
            p.server.receive().subscribe(sub);
            SendOutcome earlier = SendOutcome.of(p.client.send(Mono.just(RdmaMessage.of("earlier"))));
            p.drive();
            assertTrue(earlier.completed());
            w.send(p.client, 5);
            p.drive();
            assertEquals(3, held.size(), "demand 3: the earlier message and two of the five");
            assertNull(w.sendError.get(), "three wait for credit while the subscriber may still ask");
            sub.cancel();
            p.drive();
            notDelivered(w, p.client, 3, 2);
            assertFalse(w.clientClosed.get() || w.serverClosed.get(), "a cancel closes the inbound side, not the connection");
            List<String> contents = new ArrayList<>();
            held.forEach(m -> contents.add(m.asString()));
            assertEquals(List.of("earlier", "m0", "m1"), contents, "messages delivered before the cancel are untouched");
            held.forEach(RdmaMessage::release);
            AtomicReference<Throwable> later = new AtomicReference<>();
            p.client.send(Mono.just(RdmaMessage.of("later"))).subscribe(null, later::set);
            p.drive();
            ConnectionClosedException refused = assertInstanceOf(ConnectionClosedException.class, later.get());
            assertTrue(refused.getMessage().startsWith(name(p.client) + ": send() refused: the peer closed its inbound side"),
                refused.getMessage());
            (receiverFirst ? p.server : p.client).close();
            (receiverFirst ? p.client : p.server).close();
            passesUntilBothClosed(p, w);
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void aSendersCloseWaitsForALiveSubscriberAndEndsWhenItCancels() {
        try (InvokerPair p = InvokerPair.open()) {
            Watch w = new Watch(p);
            List<RdmaMessage> held = new ArrayList<>();
            HoldingSubscriber sub = new HoldingSubscriber(1, held);
            p.server.receive().subscribe(sub);
            w.send(p.client, 4);
            p.client.close();
            passMany(p);
            assertEquals(1, held.size());
            assertFalse(w.clientClosed.get(), "the subscriber may still request: the close waits");
            assertNull(w.sendError.get());
            sub.cancel();
            // only the cancel: the server's side closes on the client's CLOSE
            passesUntilBothClosed(p, w);
            notDelivered(w, p.client, 3, 1);
            assertEquals("m0", held.get(0).asString());
            held.forEach(RdmaMessage::release);
        }
    }

    @ParameterizedTest(name = "rails: {0}")
    @ValueSource(ints = {1, 2})
    void aReceiverClosingFirstKeepsGrantingCreditUntilThePeerSentEverything(int rails) {
        try (InvokerPair p = InvokerPair.open(rails, ConnectionSpec.rails(rails), b -> b.receiveBuffers(4))) {
            Watch w = new Watch(p);
            List<Integer> got = new ArrayList<>();
            AtomicBoolean completed = new AtomicBoolean();
            p.server.receive().subscribe(m -> {
                got.add(Integer.parseInt(m.asString().substring(1)));
                m.release();
            }, null, () -> completed.set(true));
            w.send(p.client, 200);
            p.pass();
            p.server.close();
            passMany(p);
            assertTrue(w.bothClosed(), ConnectionProbe.describe(p.client));
            assertEquals(200, got.size(), "every message of a send under way when the peer closed is delivered");
            for (int i = 0; i < 200; i++) {
                assertEquals(i, got.get(i));
            }
            assertTrue(w.sendCompleted.get() && completed.get());
            assertTrue(p.server.metrics().framesSent(FrameType.CREDIT) > 0, "credit went on after the receiver's CLOSE");
            // the receiver: CLOSE, then FINAL once the sender's came; the sender had the receiver's CLOSE: one CLOSE that is final
            assertEquals(2L * rails, p.server.metrics().framesSent(FrameType.CLOSE));
            assertEquals(rails, p.client.metrics().framesSent(FrameType.CLOSE));
        }
    }

    @Test
    void closesCrossingEachOtherEachEndWithAFinal() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(4))) {
            Watch w = new Watch(p);
            p.server.receive().subscribe(RdmaMessage::release);
            p.client.receive().subscribe(RdmaMessage::release);
            w.send(p.client, 20);
            p.drive();
            p.client.close();
            p.server.close();
            passesUntilBothClosed(p, w);
            assertTrue(w.sendCompleted.get());
            assertEquals(2, p.client.metrics().framesSent(FrameType.CLOSE), "CLOSE, then FINAL after the peer's CLOSE");
            assertEquals(2, p.server.metrics().framesSent(FrameType.CLOSE));
        }
    }

    @Test
    void anAbortAfterAGracefulCloseStillReachesThePeer() {
        try (InvokerPair p = InvokerPair.open()) {
            Watch w = new Watch(p);
            BaseSubscriber<RdmaMessage> stalled = new BaseSubscriber<>() {
                @Override
                protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                    // takes nothing: the server's send waits for credit
                }
            };
            p.client.receive().subscribe(stalled);
            w.send(p.server, 2);
            p.client.close();
            passMany(p);
            assertEquals(1, p.client.metrics().framesSent(FrameType.CLOSE), "the client's CLOSE went; its FINAL waits for the server's");
            assertFalse(w.serverClosed.get());
            p.client.abort();
            passesUntilBothClosed(p, w);
            ConnectionClosedException e = assertInstanceOf(ConnectionClosedException.class, w.sendError.get());
            assertTrue(e.byPeer() && e.getMessage().contains("peer aborted " + name(p.server)), e.getMessage());
            stalled.dispose();
        }
    }
}
