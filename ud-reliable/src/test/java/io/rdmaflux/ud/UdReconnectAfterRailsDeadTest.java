package io.rdmaflux.ud;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.soft.RailConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A connection whose every rail went dead fails; the rails come back and the same two nodes connect again
 * (the fault matrix's netns column: "all rails down", then the next cell's connection): the new connection
 * must carry a stream both ways, untouched by anything of the failed one. Here the dead rails hold every
 * datagram back {@value #HOLD_NS} ns instead of dropping it, as the kernel's neighbour queue did between the
 * namespaces while a veth was down: the failed connection's datagrams then arrive during the new one. With
 * queue pair tags (the DR source ids) restarting at 1 on each new UD rail, the new connection took them in
 * ("peer sent an RTS ... without holding a message credit", or a stalled connect); tags are now unique across
 * rail incarnations, so they are dropped as foreign.
 */
class UdReconnectAfterRailsDeadTest {
    private static final long HOLD_NS = 1_500_000_000L;
    /** Every datagram held back {@value #HOLD_NS} ns: to DR a dead rail, yet each arrives in the end. */
    private static final RailConfig HOLD = RailConfig.builder().reorderRate(1.0).reorderDelayNs(HOLD_NS).faultSeed(7).build();

    private static void rails(UdPair p, RailConfig rail) {
        for (int r = 0; r < 2; r++) {
            p.soft.a().softDevice(0).softPort(r + 1).setRail(rail);
            p.soft.b().softDevice(0).softPort(r + 1).setRail(rail);
        }
    }

    @Test
    void tagsOfARailMadeAgainAreNotThoseOfTheClosedRail() {
        try (UdPair p = new UdPair(2, RailConfig.UNSHAPED, UdSpec.DEFAULTS, b -> b)) {
            java.util.Set<Integer> first = tags(p);
            p.client.close();
            p.server.close();
            assertTrue(p.await(() -> p.clientProvider.openChannels().isEmpty() && p.serverProvider.openChannels().isEmpty(), 200_000));
            RdmaConnection[] again = connect(p);
            java.util.Set<Integer> second = tags(p);
            assertTrue(!first.isEmpty() && !second.isEmpty());
            assertTrue(java.util.Collections.disjoint(first, second), "tags of the first connection " + first + " came back: " + second);
            again[0].close();
            again[1].close();
            p.await(() -> again[0].onClose().toFuture().isDone() && again[1].onClose().toFuture().isDone(), 200_000);
        }
    }

    private static java.util.Set<Integer> tags(UdPair p) {
        java.util.Set<Integer> t = new java.util.HashSet<>();
        p.clientProvider.openChannels().forEach(c -> t.add(c.tag()));
        p.serverProvider.openChannels().forEach(c -> t.add(c.tag()));
        return t;
    }

    private static RdmaConnection[] connect(UdPair p) {
        RdmaServer listener = p.serverNode.bind(new PortAddress("mem", p.soft.b().devices().get(0).name(), 0));
        AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
        AtomicReference<RdmaConnection> connected = new AtomicReference<>();
        listener.accept().subscribe(accepted::set);
        p.clientNode.connect(listener.address(), ConnectionSpec.rails(2).channelKind(ChannelKind.RELIABLE_UD)).subscribe(connected::set);
        assertTrue(p.await(() -> accepted.get() != null && connected.get() != null, 2_000_000), "connected again");
        listener.close();
        return new RdmaConnection[] {connected.get(), accepted.get()};
    }

    @Test
    void aNewConnectionAfterOneWhoseRailsAllDiedCarriesAFullStreamBothWays() {
        try (UdPair p = new UdPair(2, RailConfig.UNSHAPED, UdSpec.DEFAULTS, b -> b)) {
            // the first connection: the server streams to the client, every rail dies mid-stream
            AtomicInteger got = new AtomicInteger();
            AtomicReference<Throwable> firstError = new AtomicReference<>();
            p.client.receive().subscribe(m -> {
                got.incrementAndGet();
                m.release();
            }, firstError::set);
            p.server.receive().subscribe(RdmaMessage::release, e -> { });
            p.server.send(Flux.range(0, 100_000).map(i -> RdmaMessage.of(new byte[64 + i % 1500]))).subscribe(null, e -> { });
            assertTrue(p.await(() -> got.get() > 60, 1_000_000));
            rails(p, HOLD);
            assertTrue(p.await(() -> firstError.get() != null && p.client.isDisposed() && p.server.isDisposed(), 5_000_000),
                "the first connection fails on both sides");
            // the rails come back at once, while what the failed connection left may still be under way
            rails(p, RailConfig.UNSHAPED);

            // the second connection between the same nodes, while the first one's datagrams are still held back
            long heldUntil = p.soft.clock().nanoTime() + HOLD_NS;
            RdmaConnection[] second = connect(p);
            RdmaConnection c = second[0];
            RdmaConnection s = second[1];
            int n = 300;
            // idle until the first connection's datagrams have all arrived (a DR keepalive or two goes meanwhile)
            long until = heldUntil + 100_000_000L;
            p.await(() -> p.soft.clock().nanoTime() > until, 5_000_000);
            AtomicInteger atClient = new AtomicInteger();
            AtomicInteger atServer = new AtomicInteger();
            AtomicReference<Throwable> error = new AtomicReference<>();
            AtomicReference<String> wrong = new AtomicReference<>();
            c.receive().subscribe(m -> {
                if (m.psn() != atClient.get()) {
                    wrong.compareAndSet(null, "message " + atClient.get() + " has PSN " + m.psn());
                }
                atClient.incrementAndGet();
                m.release();
            }, error::set);
            s.receive().subscribe(m -> {
                atServer.incrementAndGet();
                m.release();
            }, error::set);
            s.send(Flux.range(0, n).map(i -> RdmaMessage.of(new byte[64 + i % 1500]))).subscribe(null, error::set);
            c.send(Flux.range(0, n).map(i -> RdmaMessage.of(new byte[64]))).subscribe(null, error::set);
            p.await(() -> (atClient.get() == n && atServer.get() == n) || error.get() != null, 5_000_000);
            assertNull(error.get(), () -> "the second connection failed: " + error.get());
            assertNull(wrong.get());
            assertTrue(atClient.get() == n && atServer.get() == n, atClient + " / " + atServer + " messages of " + n);
            c.close();
            s.close();
            p.await(() -> c.onClose().toFuture().isDone() && s.onClose().toFuture().isDone(), 200_000);
        }
    }
}
