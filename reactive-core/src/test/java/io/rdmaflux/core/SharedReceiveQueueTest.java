package io.rdmaflux.core;

import io.rdmaflux.core.internal.srq.RailSharedBuffers;
import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.soft.SoftDevice;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** RC connections over one shared receive queue (and one shared send region) per node and rail. */
class SharedReceiveQueueTest {
    private static final int SRQ_BUFFERS = 64;

    @Test
    void connectionsAddNoRegisteredMemoryOverSharedQueuesButEachAddsItsPoolsWithout() {
        long srqGrowth;
        long ownGrowth;
        try (InvokerPeers p = new InvokerPeers(b -> b.sharedReceiveQueue(SRQ_BUFFERS))) {
            assertTrue(p.clientNode.usesSharedReceiveQueue());
            p.connect(ConnectionSpec.defaults());
            long before = p.soft.a().allocatedBytes() + p.soft.b().allocatedBytes();
            for (int i = 0; i < 10; i++) {
                p.connect(ConnectionSpec.defaults());
            }
            srqGrowth = p.soft.a().allocatedBytes() + p.soft.b().allocatedBytes() - before;
        }
        try (InvokerPeers p = new InvokerPeers(b -> { })) {
            assertFalse(p.clientNode.usesSharedReceiveQueue());
            p.connect(ConnectionSpec.defaults());
            long before = p.soft.a().allocatedBytes() + p.soft.b().allocatedBytes();
            for (int i = 0; i < 10; i++) {
                p.connect(ConnectionSpec.defaults());
            }
            ownGrowth = p.soft.a().allocatedBytes() + p.soft.b().allocatedBytes() - before;
        }
        assertEquals(0, srqGrowth, "registered bytes added by 10 connections over SRQs");
        // 8 KiB buffers x (64 receive + 8 control + 8 rendezvous control + 64 send) x 2 sides x 10 connections
        assertTrue(ownGrowth >= 10L * 2 * 8192 * (64 + 8 + 64), "per-connection pools added only " + ownGrowth + " bytes");
    }

    @Test
    void aDeviceWithoutSrqsFallsBackToPerConnectionPools() {
        DeviceCapabilities c = SoftDevice.CAPABILITIES;
        DeviceCapabilities noSrq = new DeviceCapabilities(c.maxQueuePairs(), c.maxQpWorkRequests(), c.maxScatterGather(), c.maxCqEntries(),
            c.maxMemoryRegionBytes(), c.maxMessageBytes(), c.maxInlineBytes(), c.unreliableDatagram(), false, c.rdmaRead(),
            c.orderedWritePlacement());
        try (InvokerPeers p = new InvokerPeers(b -> b.sharedReceiveQueue(SRQ_BUFFERS), pb -> pb.capabilities(noSrq))) {
            assertFalse(p.clientNode.usesSharedReceiveQueue());
            assertEquals(0, p.clientNode.sharedRegisteredBytes());
            RdmaConnection[] c1 = p.connect(ConnectionSpec.defaults());
            List<String> got = new ArrayList<>();
            c1[1].receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(c1[0].send(Flux.just(RdmaMessage.of("over its own pools"))));
            p.runUntil(() -> sent.completed() && got.size() == 1);
            assertEquals(List.of("over its own pools"), got);
        }
    }

    @Test
    void sharedQueueSizesAreCheckedNamingTheFix() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder().sharedReceiveQueue(-1));
        assertTrue(e.getMessage().contains("-1") && e.getMessage().contains("sharedReceiveQueue"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder().sharedSendBuffers(1));
        assertTrue(e.getMessage().contains("sharedSendBuffers") && e.getMessage().contains("1"), e.getMessage());
        // not above the control reserve (the node's 8 control buffers): refused at build, naming the option
        e = assertThrows(IllegalArgumentException.class, () -> new InvokerPeers(b -> b.sharedReceiveQueue(8)).close());
        assertTrue(e.getMessage().contains("8") && e.getMessage().contains("sharedReceiveQueue"), e.getMessage());
    }

    /**
     * Three connections share the server's pool of 64 buffers. Connection 1's subscriber asks for 5
     * messages and holds them; its sender waits. Connections 0 and 2 carry 300 messages each meanwhile: a
     * slow subscriber only slows its own sender. Then connection 1 is aborted while its buffers sit in the
     * shared pool and its held messages are released late: every buffer comes back to the SRQ, no message
     * reaches a connection it was not sent on, and the others go on.
     */
    @Test
    void aSlowSubscriberSlowsOnlyItsOwnSenderAndAClosedConnectionLeavesNothingInThePool() {
        try (InvokerPeers p = new InvokerPeers(b -> b.sharedReceiveQueue(SRQ_BUFFERS).receiveBuffers(16).creditThreshold(4))) {
            RdmaConnection[][] cs = new RdmaConnection[3][];
            List<List<String>> got = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                cs[i] = p.connect(ConnectionSpec.defaults());
                got.add(Collections.synchronizedList(new ArrayList<>()));
            }
            List<RdmaMessage> heldBySlow = new ArrayList<>();
            cs[1][1].receive().subscribe(new BaseSubscriber<>() {
                @Override
                protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                    s.request(5);
                }

                @Override
                protected void hookOnNext(RdmaMessage m) {
                    got.get(1).add(m.asString());
                    heldBySlow.add(m);
                }
            });
            for (int i : new int[] {0, 2}) {
                int conn = i;
                cs[i][1].receive().subscribe(m -> {
                    got.get(conn).add(m.asString());
                    m.release();
                });
            }
            SendOutcome slow = SendOutcome.of(cs[1][0].send(Flux.range(0, 50).map(j -> RdmaMessage.of("c1-m" + j))));
            SendOutcome s0 = SendOutcome.of(cs[0][0].send(Flux.range(0, 300).map(j -> RdmaMessage.of("c0-m" + j))));
            SendOutcome s2 = SendOutcome.of(cs[2][0].send(Flux.range(0, 300).map(j -> RdmaMessage.of("c2-m" + j))));
            p.runUntil(() -> s0.completed() && s2.completed() && got.get(0).size() == 300 && got.get(2).size() == 300);
            assertEquals(5, got.get(1).size());
            assertFalse(slow.completed(), "the slow subscriber's sender waits for credit");
            RailSharedBuffers shared = p.serverNode.sharedBuffers().existing(0);
            assertNotNull(shared);
            assertTrue(shared.receive().budget().held() >= 5, "the slow connection holds its messages' buffers in the pool");

            cs[1][0].abort();
            p.drive();
            heldBySlow.forEach(RdmaMessage::release);
            p.drive();
            assertNotNull(slow.error(), "the aborted connection's send fails");

            // the survivors go on over the same pool
            SendOutcome more = SendOutcome.of(cs[0][0].send(Flux.range(300, 100).map(j -> RdmaMessage.of("c0-m" + j))));
            p.runUntil(() -> more.completed() && got.get(0).size() == 400);
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < got.get(i).size(); j++) {
                    assertEquals("c" + i + "-m" + j, got.get(i).get(j), "connection " + i + " message " + j);
                }
            }
            for (RdmaConnection c : p.clientNode.connections()) {
                c.close();
            }
            p.drive();
            assertEquals(0, shared.receive().budget().held(), "buffers still lent: " + shared.receive().budget());
            assertEquals(0, shared.send().inUse(), "send buffers still out: " + shared.send());
            assertEquals(SRQ_BUFFERS, shared.receive().posted(), "every receive buffer is back on the SRQ: " + shared.receive());
            assertEquals(0, shared.receive().budget().accounts());
        }
    }

    /**
     * Credits cannot be taken back, so idle peers whose subscribers asked for everything keep what they were
     * lent: 12 such connections on a pool of 56 DATA buffers would hold them all without the credit window.
     * With a window of 4 they hold 48, and a 13th connection that starts talking streams 200 messages.
     */
    @Test
    void idlePeersWithUnboundedDemandHoldOnlyTheirCreditWindowSoANewcomerStreams() {
        try (InvokerPeers p = new InvokerPeers(b -> b.sharedReceiveQueue(SRQ_BUFFERS).sharedCreditWindow(4))) {
            for (int i = 0; i < 12; i++) {
                p.connect(ConnectionSpec.defaults())[1].receive().subscribe(RdmaMessage::release);
            }
            p.drive();
            RailSharedBuffers shared = p.serverNode.sharedBuffers().existing(0);
            assertNotNull(shared);
            assertEquals(48, shared.receive().budget().held(), "12 idle connections x a window of 4: " + shared.receive().budget());
            RdmaConnection[] c = p.connect(ConnectionSpec.defaults());
            List<String> got = new ArrayList<>();
            c[1].receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(c[0].send(Flux.range(0, 200).map(j -> RdmaMessage.of("m" + j))));
            p.runUntil(() -> sent.completed() && got.size() == 200);
            assertEquals("m199", got.get(199));
            assertTrue(shared.receive().budget().held() <= 56);
        }
    }
}
