package io.rdmaflux.micrometer;

import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.rdmaflux.core.ConnectionMetrics;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.striping.connection.RailsChannelFactory;
import io.rdmaflux.verbs.PortAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RdmaNodeMetrics} against real traffic between two nodes in virtual time: every meter compared
 * with what was sent, received and measured, before and after the connections closed.
 */
class RdmaNodeMetricsTest {
    private static final int MESSAGES = 200;
    private static final int SIZE = 100;

    private final VirtualPair pair = new VirtualPair();
    private final SimpleMeterRegistry clientMeters = new SimpleMeterRegistry();
    private final SimpleMeterRegistry serverMeters = new SimpleMeterRegistry();

    @AfterEach
    void close() {
        pair.close();
    }

    /** Receives with {@code request(initial)}, releasing each message; {@link #requestMore} adds demand. */
    private static final class Receiver extends BaseSubscriber<RdmaMessage> {
        final AtomicLong count = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final AtomicBoolean done = new AtomicBoolean();
        private final long initial;

        Receiver(long initial) {
            this.initial = initial;
        }

        @Override
        protected void hookOnSubscribe(Subscription s) {
            s.request(initial);
        }

        @Override
        protected void hookOnNext(RdmaMessage m) {
            try (m) {
                bytes.addAndGet(m.lengthBytes());
                count.incrementAndGet();
            }
        }

        @Override
        protected void hookOnComplete() {
            done.set(true);
        }

        void requestMore(long n) {
            request(n);
        }
    }

    private Flux<RdmaMessage> messages(int n, int size) {
        return Flux.range(0, n).map(i -> RdmaMessage.of(new byte[size]));
    }

    private void send(RdmaConnection c, Flux<RdmaMessage> messages) {
        AtomicBoolean sent = new AtomicBoolean();
        AtomicReference<Throwable> error = new AtomicReference<>();
        c.send(messages).subscribe(null, error::set, () -> sent.set(true));
        pair.await("send", () -> sent.get() || error.get() != null);
        if (error.get() != null) {
            throw new AssertionError("send failed", error.get());
        }
    }

    private void closeBoth(RdmaConnection client, RdmaConnection server) {
        client.close();
        server.close();
        pair.await("both freed", () -> pair.client.connections().isEmpty() && pair.server.connections().isEmpty());
    }

    private static double counter(SimpleMeterRegistry r, String name) {
        return r.get(name).functionCounter().count();
    }

    @Test
    void countersMatchTheTrafficAndKeepItAfterTheConnectionsAreFreed() {
        RdmaNodeMetrics cm = RdmaNodeMetrics.builder(pair.client).tags(Tags.of("app", "test")).build();
        RdmaNodeMetrics sm = RdmaNodeMetrics.of(pair.server);
        cm.bindTo(clientMeters);
        sm.bindTo(serverMeters);
        RdmaConnection c = pair.connect(cm.connect(pair.listener.address(), ConnectionSpec.rails(2)));
        RdmaConnection s = pair.accepted();
        Receiver receiver = new Receiver(Long.MAX_VALUE);
        s.receive().subscribe(receiver);
        assertEquals(1, clientMeters.get("rdmaflux.connections.active").gauge().value());

        send(c, messages(MESSAGES, SIZE));
        pair.await("received", () -> receiver.count.get() == MESSAGES);
        ConnectionMetrics sent = c.metrics();

        assertEquals(MESSAGES, counter(clientMeters, "rdmaflux.connection.messages.sent"));
        assertEquals(MESSAGES, counter(serverMeters, "rdmaflux.connection.messages.received"));
        assertEquals((double) MESSAGES * SIZE, counter(serverMeters, "rdmaflux.connection.bytes.received"));
        double bytesSent = counter(clientMeters, "rdmaflux.connection.bytes.sent");
        assertTrue(bytesSent >= MESSAGES * SIZE, "payload bytes on the rails include every message's bytes: " + bytesSent);
        double rail0 = clientMeters.get("rdmaflux.rail.bytes").tag("rail", "0").functionCounter().count();
        double rail1 = clientMeters.get("rdmaflux.rail.bytes").tag("rail", "1").functionCounter().count();
        assertEquals(bytesSent, rail0 + rail1, "the rails' bytes add up to the connection's");
        assertTrue(rail0 > 0 && rail1 > 0, "round robin uses both rails: " + rail0 + " / " + rail1);

        FunctionTimer delivery = clientMeters.get("rdmaflux.connection.delivery.time").functionTimer();
        assertEquals(MESSAGES, delivery.count());
        assertEquals(sent.deliveryTotalNs(), delivery.totalTime(TimeUnit.NANOSECONDS));
        assertTrue(delivery.mean(TimeUnit.NANOSECONDS) > 0, "virtual time passes while frames cross the fabric");
        assertEquals("test", clientMeters.get("rdmaflux.connection.messages.sent").functionCounter().getId().getTag("app"));
        assertEquals("mm-client", clientMeters.get("rdmaflux.connection.messages.sent").functionCounter().getId().getTag("node"));

        closeBoth(c, s);
        assertEquals(0, clientMeters.get("rdmaflux.connections.active").gauge().value());
        assertEquals(MESSAGES, counter(clientMeters, "rdmaflux.connection.messages.sent"), "a freed connection's count stays");
        assertEquals((double) MESSAGES * SIZE, counter(serverMeters, "rdmaflux.connection.bytes.received"));
        assertEquals(rail0, clientMeters.get("rdmaflux.rail.bytes").tag("rail", "0").functionCounter().count());
        assertEquals(MESSAGES, clientMeters.get("rdmaflux.connection.delivery.time").functionTimer().count());

        // a second connection adds to what the first counted
        RdmaConnection c2 = pair.connect(cm.connect(pair.listener.address(), ConnectionSpec.rails(1)));
        Receiver r2 = new Receiver(Long.MAX_VALUE);
        pair.accepted().receive().subscribe(r2);
        send(c2, messages(10, SIZE));
        pair.await("received", () -> r2.count.get() == 10);
        assertEquals(MESSAGES + 10, counter(clientMeters, "rdmaflux.connection.messages.sent"));
        assertEquals(2, clientMeters.get("rdmaflux.connection.connect.time").tag("outcome", "SUCCESS").timers().stream()
            .mapToLong(Timer::count).sum(), "one connect over 2 rails, one over 1");
        closeBoth(c2, pair.accepted());
        cm.close();
        sm.close();
    }

    @Test
    void aReceiverWithoutDemandShowsAsCreditStallsAndCreditsComeBackWithDemand() {
        RdmaNodeMetrics cm = RdmaNodeMetrics.of(pair.client);
        cm.bindTo(clientMeters);
        RdmaNodeMetrics.of(pair.server).bindTo(serverMeters);
        RdmaConnection c = pair.connect(cm.connect(pair.listener.address(), ConnectionSpec.rails(2)));
        RdmaConnection s = pair.accepted();
        Receiver receiver = new Receiver(4);
        s.receive().subscribe(receiver);
        AtomicBoolean sent = new AtomicBoolean();
        c.send(messages(40, SIZE)).subscribe(null, null, () -> sent.set(true));
        pair.await("4 received", () -> receiver.count.get() == 4);
        for (int i = 0; i < 1_000; i++) {
            pair.pass();
        }
        assertFalse(sent.get(), "the receiver asked for 4 of 40");
        double stalls = counter(clientMeters, "rdmaflux.connection.credit.stalls");
        assertTrue(stalls >= 1, "the sender waits for credit: " + stalls);
        assertEquals(0, clientMeters.get("rdmaflux.connection.credits.available").gauge().value(), "no credit while stalled");
        for (int i = 0; i < 1_000; i++) {
            if (pair.pass() == 0) {
                pair.soft.clock().advance(10_000);
            }
        }
        assertEquals(stalls, counter(clientMeters, "rdmaflux.connection.credit.stalls"), "one episode, however long and many attempts");
        assertEquals(stalls, c.metrics().creditStalls(), "the meter is the connection's count");

        receiver.requestMore(Long.MAX_VALUE);
        pair.await("sent", sent::get);
        assertEquals(40, receiver.count.get());
        assertEquals(0, counter(serverMeters, "rdmaflux.connection.credit.stalls"), "the server sent nothing");
        pair.await("credits granted back", () -> clientMeters.get("rdmaflux.connection.credits.available").gauge().value() > 0);
        closeBoth(c, s);
    }

    @Test
    void messagesOfAFailedRailCountAsRetransmitsAndOutOfOrderArrivalsAreCounted() {
        RdmaNodeMetrics cm = RdmaNodeMetrics.of(pair.client);
        RdmaNodeMetrics sm = RdmaNodeMetrics.of(pair.server);
        cm.bindTo(clientMeters);
        sm.bindTo(serverMeters);
        RdmaConnection c = pair.connect(cm.connect(pair.listener.address(), ConnectionSpec.rails(2)));
        RdmaConnection s = pair.accepted();
        Receiver receiver = new Receiver(Long.MAX_VALUE);
        s.receive().subscribe(receiver);
        AtomicBoolean sent = new AtomicBoolean();
        AtomicReference<Throwable> error = new AtomicReference<>();
        // one message per frame (4 KiB each) on both rails: some are in flight on rail 1 when it dies
        c.send(messages(MESSAGES, 4_000)).subscribe(null, error::set, () -> sent.set(true));
        pair.await("a quarter received", () -> receiver.count.get() >= MESSAGES / 4);
        assertTrue(receiver.count.get() < MESSAGES, "the rail dies mid-stream");
        ((io.rdmaflux.verbs.soft.SoftPort) pair.soft.a().devices().get(0).port(2)).setState(io.rdmaflux.verbs.PortState.DOWN);
        pair.await("sent over the rail left", () -> (sent.get() && receiver.count.get() == MESSAGES) || error.get() != null);
        assertEquals(null, error.get());

        double retransmits = counter(clientMeters, "rdmaflux.connection.retransmits");
        assertTrue(retransmits > 0, "messages in flight on the dead rail are sent again: " + retransmits);
        assertEquals(c.metrics().messagesResent(), retransmits);
        assertEquals(s.metrics().outOfOrder(), counter(serverMeters, "rdmaflux.connection.out.of.order"));
        assertTrue(counter(serverMeters, "rdmaflux.connection.out.of.order") > 0,
            "messages behind a lost one on the other rail wait in the reorder queue");
        assertEquals(MESSAGES, counter(serverMeters, "rdmaflux.connection.messages.received"), "exactly once");
        c.abort();
        s.abort();
        pair.await("both freed", () -> pair.client.connections().isEmpty() && pair.server.connections().isEmpty());
        assertEquals(retransmits, counter(clientMeters, "rdmaflux.connection.retransmits"), "kept after the connection is freed");
    }

    @Test
    void railWeightsAreTheStripingPolicysShares() {
        RailsChannelFactory weighted = RailsChannelFactory.weighted(3, 1);
        RdmaNodeMetrics cm = RdmaNodeMetrics.builder(pair.client).striping(weighted).build();
        cm.bindTo(clientMeters);
        assertTrue(Double.isNaN(clientMeters.get("rdmaflux.rail.weight").tag("rail", "0").gauge().value()), "no connection yet");
        RdmaConnection c = pair.connect(cm.connect(pair.listener.address(), ConnectionSpec.rails(2).striping(weighted)));
        assertEquals(0.75, clientMeters.get("rdmaflux.rail.weight").tag("rail", "0").gauge().value(), 1e-9);
        assertEquals(0.25, clientMeters.get("rdmaflux.rail.weight").tag("rail", "1").gauge().value(), 1e-9);
        assertTrue(serverMeters.find("rdmaflux.rail.weight").meters().isEmpty(), "no striping factory given: no weight gauge");
        pair.accepted().receive().subscribe(new Receiver(Long.MAX_VALUE));
        closeBoth(c, pair.accepted());
    }

    @Test
    void connectIsObservedAndTimedWithoutThePeerAddressInAnyTag() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        RdmaNodeMetrics cm = RdmaNodeMetrics.builder(pair.client).observationRegistry(observations).build();
        cm.bindTo(clientMeters);
        PortAddress address = pair.listener.address();
        long before = pair.soft.clock().nanoTime();
        RdmaConnection c = pair.connect(cm.connect(address, ConnectionSpec.rails(2)));
        long elapsed = pair.soft.clock().nanoTime() - before;

        TestObservationRegistryAssert.assertThat(observations).hasObservationWithNameEqualTo(RdmaNodeMetrics.CONNECT_OBSERVATION).that()
            .hasBeenStarted().hasBeenStopped()
            .hasLowCardinalityKeyValue("node", "mm-client")
            .hasLowCardinalityKeyValue("rails", "2")
            .hasLowCardinalityKeyValue("outcome", "SUCCESS")
            .hasHighCardinalityKeyValue("peer.address", address.toString())
            .hasContextualNameEqualTo("rdmaflux connect");
        Timer timer = clientMeters.get("rdmaflux.connection.connect.time").tags("outcome", "SUCCESS", "rails", "2").timer();
        assertEquals(1, timer.count());
        assertTrue(timer.totalTime(TimeUnit.NANOSECONDS) <= elapsed,
            "virtual ns between subscribe and connected: " + timer.totalTime(TimeUnit.NANOSECONDS) + " of " + elapsed);
        TestObservationRegistryAssert.assertThat(observations).hasHandledContextsThatSatisfy(contexts -> {
            RdmaConnectContext context = (RdmaConnectContext) contexts.get(0);
            assertEquals(c, context.connection());
            assertEquals(address, context.address());
            assertEquals(2, context.spec().rails());
        });
        for (Meter m : clientMeters.getMeters()) {
            for (Tag t : m.getId().getTags()) {
                assertFalse(t.getValue().contains(address.host()), m.getId() + " has the peer in tag " + t);
            }
        }
        pair.accepted().receive().subscribe(new Receiver(Long.MAX_VALUE));
        closeBoth(c, pair.accepted());
    }

    @Test
    void aFailedConnectIsAnErrorOutcomeAndTheObservationsError() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        RdmaNodeMetrics cm = RdmaNodeMetrics.builder(pair.client).observationRegistry(observations).build();
        cm.bindTo(clientMeters);
        PortAddress nobody = new PortAddress("mem", pair.soft.b().devices().get(0).name(), 4242);
        AtomicReference<Throwable> error = new AtomicReference<>();
        cm.connect(nobody, ConnectionSpec.rails(1)).subscribe(c -> { }, error::set);
        pair.await("connect refused", () -> error.get() != null);

        TestObservationRegistryAssert.assertThat(observations).hasObservationWithNameEqualTo(RdmaNodeMetrics.CONNECT_OBSERVATION).that()
            .hasBeenStopped().hasLowCardinalityKeyValue("outcome", "ERROR").hasError(error.get());
        assertEquals(1, clientMeters.get("rdmaflux.connection.connect.time").tags("outcome", "ERROR", "rails", "1").timer().count());
        assertEquals(0, clientMeters.get("rdmaflux.connections.active").gauge().value());
    }

    @Test
    void badInputIsRefusedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> RdmaNodeMetrics.builder(pair.client).tags(Tags.of("rail", "x")));
        assertTrue(e.getMessage().contains("'rail'"), e.getMessage());
        assertThrows(NullPointerException.class, () -> RdmaNodeMetrics.builder(null));
        assertThrows(NullPointerException.class, () -> RdmaNodeMetrics.builder(pair.client).observationRegistry(null));
        assertThrows(NullPointerException.class, () -> RdmaNodeMetrics.of(pair.client).connect(null, ConnectionSpec.rails(1)));
    }
}
