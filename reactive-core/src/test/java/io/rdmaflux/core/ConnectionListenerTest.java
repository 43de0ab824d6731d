package io.rdmaflux.core;

import io.rdmaflux.core.channel.SubchannelSnapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RdmaNode#connections()} and {@link ConnectionListener}: opened and freed once per connection,
 * with the final counters; a throwing listener disturbs neither the node nor the other listeners. Also
 * the counters {@link ConnectionMetrics} gained for them (bytes received).
 */
class ConnectionListenerTest {
    private final List<Throwable> dropped = new CopyOnWriteArrayList<>();

    @AfterEach
    void resetHooks() {
        Hooks.resetOnErrorDropped();
    }

    private record Freed(RdmaConnection connection, ConnectionMetrics metrics, List<SubchannelSnapshot> rails) {
    }

    private static final class Recorder implements ConnectionListener {
        final List<RdmaConnection> opened = new CopyOnWriteArrayList<>();
        final List<Freed> freed = new CopyOnWriteArrayList<>();

        @Override
        public void connectionOpened(RdmaConnection connection) {
            opened.add(connection);
        }

        @Override
        public void connectionFreed(RdmaConnection connection, ConnectionMetrics metrics, List<SubchannelSnapshot> subchannels) {
            freed.add(new Freed(connection, metrics, subchannels));
        }
    }

    @Test
    void listenersHearOfEveryConnectionOpenedAndFreedOnceWithItsFinalCounters() {
        Hooks.onErrorDropped(dropped::add);
        try (InvokerPair p = InvokerPair.open()) {
            assertEquals(List.of(p.client), p.clientNode.connections());
            Recorder client = new Recorder();
            Recorder server = new Recorder();
            p.clientNode.addConnectionListener(new ConnectionListener() {
                @Override
                public void connectionOpened(RdmaConnection connection) {
                    throw new IllegalStateException("a listener that fails");
                }
            });
            p.clientNode.addConnectionListener(client);
            p.serverNode.addConnectionListener(server);

            AtomicReference<RdmaConnection> second = new AtomicReference<>();
            p.clientNode.connect(p.listenAddress(), ConnectionSpec.defaults()).subscribe(second::set);
            p.runUntil(() -> second.get() != null && server.opened.size() == 1);
            assertEquals(List.of(second.get()), client.opened, "the throwing listener before it did not stop it");
            assertEquals(1, dropped.size(), "the listener's error went to onErrorDropped: " + dropped);
            assertEquals(2, p.clientNode.connections().size());

            RdmaConnection accepted = server.opened.get(0);
            List<Integer> got = new CopyOnWriteArrayList<>();
            accepted.receive().subscribe(m -> {
                try (m) {
                    got.add(m.lengthBytes());
                }
            });
            AtomicBoolean sent = new AtomicBoolean();
            second.get().send(Flux.range(1, 10).map(i -> RdmaMessage.of(new byte[i * 10]))).subscribe(null, null, () -> sent.set(true));
            p.runUntil(() -> sent.get() && got.size() == 10);
            assertEquals(550, accepted.metrics().bytesReceived(), "10 + 20 + ... + 100 bytes");
            assertTrue(second.get().metrics().bytesSent() >= 550, "payload bytes on the rail: " + second.get().metrics().bytesSent());

            second.get().close();
            accepted.close();
            p.runUntil(() -> client.freed.size() == 1 && server.freed.size() == 1);
            Freed f = client.freed.get(0);
            assertEquals(second.get(), f.connection());
            assertEquals(10, f.metrics().messagesSent());
            assertEquals(10, f.metrics().messagesDelivered());
            assertEquals(f.metrics().bytesSent(), f.rails().get(0).bytesSent());
            assertEquals(550, server.freed.get(0).metrics().bytesReceived());
            assertEquals(List.of(p.client), p.clientNode.connections(), "the freed connection is no longer listed");
        }
    }

    @Test
    void aDisposedRegistrationHearsNothingAndTheNodesCloseFreesWhatIsLeft() {
        Recorder gone = new Recorder();
        Recorder kept = new Recorder();
        InvokerPair p = InvokerPair.open();
        Disposable registration = p.clientNode.addConnectionListener(gone);
        p.clientNode.addConnectionListener(kept);
        registration.dispose();
        p.close();
        assertEquals(List.of(), gone.freed);
        assertEquals(1, kept.freed.size(), "freed once, by the graceful close or the node's close");
        assertEquals(p.client, kept.freed.get(0).connection());
        assertThrows(NullPointerException.class, () -> p.clientNode.addConnectionListener(null));
    }
}
