package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ConnectionSpec.lazy(true)}: queue pairs and handshake on first use (seed 003 &sect;3.2). */
class LazyConnectTest {
    private static final ConnectionSpec LAZY = ConnectionSpec.defaults().lazy(true);

    private static RdmaConnection connectNow(InvokerPeers p, PortAddress address) {
        AtomicReference<RdmaConnection> c = new AtomicReference<>();
        p.clientNode.connect(address, LAZY).subscribe(c::set);
        // no progress pass: the lazy connect returns at once, on the subscribing thread
        assertNotNull(c.get(), "a lazy connect completes when subscribed");
        return c.get();
    }

    @Test
    void connectMakesNothingUntilTheFirstSendWhichEstablishesAndDelivers() {
        try (InvokerPeers p = new InvokerPeers(b -> { })) {
            List<RdmaConnection> lazy = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                lazy.add(connectNow(p, p.listener.address()));
            }
            p.drive();
            assertEquals(0, p.clientNode.connections().size());
            assertEquals(0, p.acceptedCount(), "the server saw no connection request");
            assertEquals(0, p.soft.a().allocatedBytes(), "no buffer was registered for unused lazy connections");

            SendOutcome sent = SendOutcome.of(lazy.get(7).send(Flux.just(RdmaMessage.of("first"), RdmaMessage.of("second"))));
            p.runUntil(() -> p.acceptedCount() == 1);
            assertEquals(1, p.clientNode.connections().size(), "only the lazy connection used was established");
            List<String> got = new ArrayList<>();
            RdmaConnection accepted = p.serverNode.connections().get(0);
            accepted.receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            });
            p.runUntil(() -> sent.completed() && got.size() == 2);
            assertEquals(List.of("first", "second"), got);
            assertEquals(2, lazy.get(7).metrics().messagesSent());
            assertEquals(0, lazy.get(6).metrics().messagesSent());
        }
    }

    @Test
    void subscribingToReceiveEstablishesToo() {
        try (InvokerPeers p = new InvokerPeers(b -> { })) {
            RdmaConnection c = connectNow(p, p.listener.address());
            List<String> got = new ArrayList<>();
            c.receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            });
            p.runUntil(() -> p.acceptedCount() == 1);
            RdmaConnection server = p.serverNode.connections().get(0);
            SendOutcome sent = SendOutcome.of(server.send(Flux.just(RdmaMessage.of("to the lazy side"))));
            p.runUntil(() -> sent.completed() && got.size() == 1);
            assertEquals(List.of("to the lazy side"), got);
        }
    }

    @Test
    void firstSendToAnAbsentPeerFailsWithTheConnectErrorAndSoDoesEveryLaterOne() {
        try (InvokerPeers p = new InvokerPeers(b -> { })) {
            PortAddress nobody = new PortAddress("mem", p.soft.b().devices().get(0).name(), 4242);
            RdmaConnection c = connectNow(p, nobody);
            AtomicBoolean closed = new AtomicBoolean();
            c.onClose().subscribe(null, null, () -> closed.set(true));
            SendOutcome first = SendOutcome.of(c.send(Flux.just(RdmaMessage.of("lost"))));
            p.drive();
            RdmaException e = assertInstanceOf(RdmaException.class, first.error());
            assertEquals(RdmaException.Category.CONNECT, e.category());
            assertTrue(e.getMessage().contains(nobody.toString()) && e.getMessage().contains("nothing listens"), e.getMessage());
            assertInstanceOf(VerbsException.class, e.getCause());
            assertTrue(closed.get(), "onClose completes when establishing failed");
            assertTrue(c.isDisposed());
            SendOutcome second = SendOutcome.of(c.send(Flux.just(RdmaMessage.of("lost too"))));
            p.drive();
            assertSame(e, second.error(), "a later send fails with the same connect error");
            AtomicReference<Throwable> receiveError = new AtomicReference<>();
            c.receive().subscribe(m -> m.release(), receiveError::set);
            assertSame(e, receiveError.get());
        }
    }

    @Test
    void closedBeforeFirstUseNeverConnects() {
        try (InvokerPeers p = new InvokerPeers(b -> { })) {
            RdmaConnection c = connectNow(p, p.listener.address());
            c.close();
            SendOutcome sent = SendOutcome.of(c.send(Flux.just(RdmaMessage.of("never"))));
            p.drive();
            assertInstanceOf(ConnectionClosedException.class, sent.error());
            assertEquals(0, p.acceptedCount());
            assertTrue(c.isDisposed());
        }
    }

    @Test
    void aSpecAskingForMoreRailsThanPortsFailsAtConnectNotAtFirstUse() {
        try (InvokerPeers p = new InvokerPeers(b -> { })) {
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.clientNode.connect(p.listener.address(), ConnectionSpec.rails(3).lazy(true)).subscribe(c -> { }, error::set);
            IllegalArgumentException e = assertInstanceOf(IllegalArgumentException.class, error.get());
            assertTrue(e.getMessage().contains("3 rails"), e.getMessage());
        }
    }

    @Test
    void aLazyConnectToAPeerThatAppearsLaterIsReachedByTheSpecsRetry() {
        try (RestartableMemPair p = new RestartableMemPair()) {
            ConnectionSpec spec = LAZY.connectRetry(ConnectRetry.backoff(20, 1_000_000).jitter(0));
            AtomicReference<RdmaConnection> c = new AtomicReference<>();
            p.clientNode.connect(p.address, spec).subscribe(c::set);
            assertNotNull(c.get(), "a lazy connect with a retry still completes when subscribed");
            SendOutcome sent = SendOutcome.of(c.get().send(Flux.just(RdmaMessage.of("late peer"))));
            // nothing listens yet: the first attempt is refused and the retry waits on the node's clock
            p.runFor(5_000_000);
            assertNull(sent.error(), "a refusal is retried, not reported");
            assertFalse(sent.completed());
            p.startServer();
            AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
            List<String> got = new ArrayList<>();
            p.server.accept().subscribe(a -> {
                accepted.set(a);
                a.receive().subscribe(m -> {
                    got.add(m.asString());
                    m.release();
                });
            });
            p.runUntil(() -> (sent.completed() && got.size() == 1) || sent.error() != null);
            assertNull(sent.error());
            assertEquals(List.of("late peer"), got);
            c.get().close();
            accepted.get().close();
            p.drive();
        }
    }

    @Test
    void aLazyConnectWhoseRetriesRunOutFailsTheFirstSendWithTheRetriesError() {
        try (RestartableMemPair p = new RestartableMemPair()) {
            ConnectionSpec spec = LAZY.connectRetry(ConnectRetry.backoff(3, 1_000_000).jitter(0));
            AtomicReference<RdmaConnection> c = new AtomicReference<>();
            p.clientNode.connect(p.address, spec).subscribe(c::set);
            SendOutcome sent = SendOutcome.of(c.get().send(Flux.just(RdmaMessage.of("never"))));
            p.runUntil(() -> sent.error() != null);
            RdmaException e = assertInstanceOf(RdmaException.class, sent.error());
            assertEquals(RdmaException.Category.CONNECT, e.category());
            assertTrue(e.getMessage().contains(p.address.toString()), e.getMessage());
            ConnectFailedException retries = assertInstanceOf(ConnectFailedException.class, e.getCause());
            assertTrue(retries.getMessage().contains("3"), retries.getMessage());
            assertInstanceOf(io.rdmaflux.verbs.CmException.class, retries.getCause(), "the last attempt's connection manager error");
            assertTrue(c.get().isDisposed());
        }
    }
}
