package io.rdmaflux.ud;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.internal.srq.RailSharedBuffers;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.soft.RailConfig;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reliable UD connections on nodes with a shared receive queue ({@code RdmaNode.Builder.sharedReceiveQueue}): each
 * connection registers no buffers, its receive buffers are lent from the node's reliable UD pool of the rail by the
 * equal-share rule, and a connection closed or failed while it holds buffers of the pool gives every one back and
 * delivers nothing to another connection. INVOKER nodes, virtual time.
 */
class UdSharedBuffersTest {
    /** 24 buffers of which 8 are the control reserve: 16 DATA buffers, a share of 8 with two active connections. */
    private static final int POOL = 24;
    private static final int DATA_BUFFERS = 16;
    /** Unused credits a peer may hold: below the share, so an idle peer cannot sit on the pool (credits cannot be taken back). */
    private static final int WINDOW = 4;

    /** A further reliable UD connection between the pair's nodes: {client side, server side}. */
    private static RdmaConnection[] connect(UdPair p) {
        RdmaServer listener = p.serverNode.bind(new PortAddress("mem", p.soft.b().devices().get(0).name(), 0));
        AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
        AtomicReference<RdmaConnection> connected = new AtomicReference<>();
        Disposable acc = listener.accept().subscribe(accepted::set);
        p.clientNode.connect(listener.address(), ConnectionSpec.rails(1).channelKind(ChannelKind.RELIABLE_UD)).subscribe(connected::set);
        assertTrue(p.await(() -> connected.get() != null && accepted.get() != null, 1_000_000), "connected");
        acc.dispose();
        listener.close();
        return new RdmaConnection[] {connected.get(), accepted.get()};
    }

    /** A message of 5 000 bytes: one per 8 KiB buffer, never packed with another. */
    private static RdmaMessage big(String prefix, int j) {
        return RdmaMessage.of(prefix + j + "|" + "x".repeat(5000 - prefix.length() - 8));
    }

    private static String name(RdmaMessage m) {
        String s = m.asString();
        return s.substring(0, s.indexOf('|'));
    }

    private static long registered(UdPair p) {
        return p.soft.a().allocatedBytes() + p.soft.b().allocatedBytes();
    }

    private static UdChannel serverChannel(UdPair p, int index) {
        return p.serverProvider.openChannels().get(index);
    }

    @Test
    void connectionsOnASharedQueueNodeRegisterNoBuffersButWithoutOneEachRegistersItsPools() {
        long shared;
        try (UdPair p = new UdPair(1, RailConfig.UNSHAPED, UdSpec.DEFAULTS, b -> b.sharedReceiveQueue(64))) {
            assertTrue(p.serverNode.usesSharedReceiveQueue());
            long before = registered(p);
            for (int i = 0; i < 4; i++) {
                connect(p);
            }
            shared = registered(p) - before;
            assertEquals(5, p.serverProvider.openChannels().size());
            for (UdChannel ch : p.serverProvider.openChannels()) {
                assertNotNull(ch.sharedBuffers(), "over the node's pool: " + ch);
            }
            assertTrue(p.serverNode.sharedRegisteredBytes() > 0, "the pool is the node's");
        }
        long own;
        try (UdPair p = new UdPair(1, RailConfig.UNSHAPED, UdSpec.DEFAULTS, b -> b)) {
            long before = registered(p);
            for (int i = 0; i < 4; i++) {
                connect(p);
            }
            own = registered(p) - before;
            assertNull(serverChannel(p, 0).sharedBuffers());
        }
        assertEquals(0, shared, "registered bytes added by 4 reliable UD connections on shared-queue nodes");
        // 8 KiB buffers x (64 receive + 8 control + 8 rendezvous control + 64 send) x 2 sides x 4 connections
        assertTrue(own >= 4L * 2 * 8192 * (64 + 8 + 64), "per-connection pools added only " + own + " bytes");
    }

    /**
     * Skewed demand: connection B's subscriber asks for everything and keeps every message; connection A's is idle
     * first, then streams 300 messages. B never holds more than its share (half the pool's DATA buffers: A holds
     * credits, so it is active), A streams past B's held messages, and B's sender waits for credit only; once B's
     * subscriber releases, B finishes too, each connection's messages in order, no datagram dropped.
     */
    @Test
    void aGreedyHolderKeepsToItsShareAndTheOtherPeerStreamsPastIt() {
        try (UdPair p = new UdPair(1, RailConfig.UNSHAPED, UdSpec.DEFAULTS, b -> b.sharedReceiveQueue(POOL).sharedCreditWindow(WINDOW))) {
            RdmaConnection[] a = {p.client, p.server};
            RdmaConnection[] b = connect(p);
            UdChannel aCh = serverChannel(p, 0);
            UdChannel bCh = serverChannel(p, 1);
            RailSharedBuffers pool = aCh.sharedBuffers();
            assertNotNull(pool);
            assertTrue(pool == bCh.sharedBuffers(), "both draw from one pool");
            assertEquals(DATA_BUFFERS, pool.receive().budget().buffers());
            List<String> gotA = Collections.synchronizedList(new ArrayList<>());
            List<RdmaMessage> heldByB = new ArrayList<>();
            a[1].receive().subscribe(m -> {
                gotA.add(name(m));
                m.release();
            });
            p.await(() -> false, 50); // A's idle subscriber holds credits: A is active
            assertTrue(aCh.sharedBuffersHeld() > 0, "A holds credits");
            List<String> gotB = Collections.synchronizedList(new ArrayList<>());
            boolean[] holding = {true};
            b[1].receive().subscribe(new BaseSubscriber<>() {
                @Override
                protected void hookOnNext(RdmaMessage m) {
                    gotB.add(name(m));
                    if (holding[0]) {
                        heldByB.add(m);
                    } else {
                        m.release();
                    }
                }
            });
            SendOutcomes sentB = new SendOutcomes();
            b[0].send(Flux.range(0, 100).map(j -> big("b", j))).subscribe(null, sentB::error, sentB::complete);
            assertTrue(p.await(() -> heldByB.size() >= DATA_BUFFERS / 2, 500_000), "B got its share: " + heldByB.size() + ", " + pool.receive().budget());
            p.await(() -> false, 2_000);
            assertEquals(DATA_BUFFERS / 2, heldByB.size(), "B holds exactly its share: " + pool.receive().budget());
            assertTrue(bCh.sharedBuffersHeld() <= DATA_BUFFERS / 2, "B's account: " + bCh.sharedBuffersHeld());
            SendOutcomes sentA = new SendOutcomes();
            a[0].send(Flux.range(0, 300).map(j -> big("a", j))).subscribe(null, sentA::error, sentA::complete);
            assertTrue(p.await(() -> sentA.done && gotA.size() == 300, 3_000_000), "A streamed past B: " + gotA.size());
            assertNull(sentA.failure);
            assertFalse(sentB.done, "B's sender waits for credit");
            assertEquals(DATA_BUFFERS / 2, heldByB.size(), "B got no more than its share meanwhile");
            assertTrue(pool.receive().budget().held() <= DATA_BUFFERS, "never overcommitted: " + pool.receive().budget());
            holding[0] = false;
            heldByB.forEach(RdmaMessage::release);
            heldByB.clear();
            assertTrue(p.await(() -> sentB.done && gotB.size() == 100, 3_000_000), "B finishes once released: " + gotB.size());
            assertNull(sentB.failure);
            for (int j = 0; j < gotA.size(); j++) {
                assertEquals("a" + j, gotA.get(j));
            }
            for (int j = 0; j < gotB.size(); j++) {
                assertEquals("b" + j, gotB.get(j));
            }
            assertEquals(0, p.soft.b().softDevice(0).udDatagramsDropped(), "no datagram dropped");
        }
    }

    /**
     * Three connections on one pool of 64 buffers per node. Connection 1's subscriber takes 5 messages and keeps
     * them, then its sender aborts (the messages are released after the abort); connection 2's receiving side aborts
     * mid-stream, with credits out, messages in flight in DR and completions not yet polled; connection 0 streams
     * throughout and then again. Every connection gets only its own messages, in order; at the end every buffer of
     * both nodes' pools is posted again, nothing is lent, no send buffer is out and no account is left.
     */
    @Test
    void aConnectionClosedOrFailedWhileItHoldsPoolBuffersGivesThemAllBackAndMisdeliversNothing() {
        try (UdPair p = new UdPair(1, RailConfig.UNSHAPED, UdSpec.DEFAULTS, b -> b.sharedReceiveQueue(64).receiveBuffers(16).creditThreshold(4))) {
            RdmaConnection[][] cs = {{p.client, p.server}, connect(p), connect(p)};
            RailSharedBuffers serverPool = serverChannel(p, 0).sharedBuffers();
            RailSharedBuffers clientPool = p.clientProvider.openChannels().get(0).sharedBuffers();
            assertNotNull(serverPool);
            assertNotNull(clientPool);
            List<List<String>> got = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                got.add(Collections.synchronizedList(new ArrayList<>()));
            }
            List<RdmaMessage> heldBy1 = new ArrayList<>();
            cs[1][1].receive().subscribe(new BaseSubscriber<>() {
                @Override
                protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                    s.request(5);
                }

                @Override
                protected void hookOnNext(RdmaMessage m) {
                    got.get(1).add(name(m));
                    heldBy1.add(m);
                }
            });
            for (int i : new int[] {0, 2}) {
                List<String> g = got.get(i);
                cs[i][1].receive().subscribe(m -> {
                    g.add(name(m));
                    m.release();
                }, e -> { });
            }
            SendOutcomes s1 = new SendOutcomes();
            SendOutcomes s0 = new SendOutcomes();
            SendOutcomes s2 = new SendOutcomes();
            cs[1][0].send(Flux.range(0, 50).map(j -> big("c1-", j))).subscribe(null, s1::error, s1::complete);
            cs[0][0].send(Flux.range(0, 300).map(j -> big("c0-", j))).subscribe(null, s0::error, s0::complete);
            cs[2][0].send(Flux.range(0, 300).map(j -> big("c2-", j))).subscribe(null, s2::error, s2::complete);
            assertTrue(p.await(() -> got.get(2).size() >= 20, 3_000_000), "connection 2 streams: " + got.get(2).size());
            assertTrue(serverPool.receive().budget().held() > 0, "buffers lent when connection 2 aborts: " + serverPool.receive().budget());
            cs[2][1].abort();
            assertTrue(p.await(() -> s0.done && got.get(0).size() == 300 && s2.done, 3_000_000), "connection 0 finishes: " + got.get(0).size());
            assertNotNull(s2.failure, "the sender of the aborted connection 2 fails");
            assertEquals(5, got.get(1).size());
            assertFalse(s1.done, "the slow subscriber's sender waits for credit");
            assertTrue(serverPool.receive().budget().held() >= 5, "connection 1 holds its messages' buffers in the pool");

            cs[1][0].abort();
            p.await(() -> s1.done, 1_000_000);
            heldBy1.forEach(RdmaMessage::release);
            assertNotNull(s1.failure, "the aborted connection 1's send fails");

            SendOutcomes more = new SendOutcomes();
            cs[0][0].send(Flux.range(300, 100).map(j -> big("c0-", j))).subscribe(null, more::error, more::complete);
            assertTrue(p.await(() -> more.done && got.get(0).size() == 400, 3_000_000), "connection 0 goes on: " + got.get(0).size());
            assertNull(more.failure);
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < got.get(i).size(); j++) {
                    assertEquals("c" + i + "-" + j, got.get(i).get(j), "connection " + i + " message " + j);
                }
            }
            for (RdmaConnection[] c : cs) {
                c[0].close();
                c[1].close();
            }
            p.await(() -> p.serverProvider.openChannels().isEmpty() && p.clientProvider.openChannels().isEmpty(), 1_000_000);
            for (RailSharedBuffers pool : List.of(serverPool, clientPool)) {
                assertEquals(0, pool.receive().budget().held(), "buffers still lent: " + pool.receive().budget());
                assertEquals(0, pool.receive().budget().accounts(), "accounts left: " + pool.receive().budget());
                assertEquals(0, pool.send().inUse(), "send buffers still out: " + pool.send());
                assertEquals(pool.receive().buffers(), pool.receive().posted(), "every receive buffer is posted again: " + pool.receive());
            }
        }
    }

    /** A send's end, as plain fields of the (single) progress thread. */
    private static final class SendOutcomes {
        volatile boolean done;
        volatile Throwable failure;

        void complete() {
            done = true;
        }

        void error(Throwable t) {
            failure = t;
            done = true;
        }
    }
}
