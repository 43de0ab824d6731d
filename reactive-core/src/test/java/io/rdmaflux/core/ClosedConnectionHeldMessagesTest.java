package io.rdmaflux.core;

import io.rdmaflux.core.internal.rc.RcSubchannel;
import io.rdmaflux.verbs.soft.SoftResources;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rendezvous and reassembled messages hold nothing of the rails (a slot of the node's message buffer
 * pool, their own buffer): a closed connection frees its QPs, CQs and rail buffers while the
 * application still holds such messages, and its node keeps counting the messages, and listing the
 * connection, until they are released. INVOKER mode, virtual time.
 */
class ClosedConnectionHeldMessagesTest {
    private static final int LARGE_BYTES = 50_000;

    @ParameterizedTest(name = "rendezvousBuffers={0}")
    @ValueSource(ints = {2, 0})
    void heldLargeMessagesDoNotPinTheRailsOfTheClosedConnection(int rendezvousBuffers) {
        long queuePairsBefore = SoftResources.liveQueuePairs();
        InvokerPair p = InvokerPair.open(b -> b.bufferBytes(1024).maxMessageBytes(64 * 1024).rendezvousBuffers(rendezvousBuffers));
        long pairQueuePairs = SoftResources.liveQueuePairs() - queuePairsBefore;
        List<RdmaMessage> held = new ArrayList<>();
        try {
            p.server.receive().subscribe(held::add);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 2).map(i -> RdmaMessage.of(new byte[LARGE_BYTES]))));
            p.runUntil(() -> sent.completed() && held.size() == 2);
            assertEquals(List.of(LARGE_BYTES, LARGE_BYTES), List.of(held.get(0).lengthBytes(), held.get(1).lengthBytes()));

            p.client.close();
            p.drive();
            assertTrue(p.server.isDisposed());
            RcSubchannel serverRail = ConnectionProbe.channel(p.server, 0);
            assertTrue(serverRail.isClosed(), "the held messages kept the closed connection's QP, CQ and rail buffers");
            assertEquals(queuePairsBefore, SoftResources.liveQueuePairs(), "both sides' QPs are destroyed (" + pairQueuePairs + " were made)");
            assertEquals(new RdmaNode.NodeMetrics(1, 2), p.serverNode.metrics(),
                "the node lists the connection and counts its messages until they are released");

            held.get(0).release();
            assertEquals(new RdmaNode.NodeMetrics(1, 1), p.serverNode.metrics());
            // released off the progress thread, with no duty cycle after it: the connection is forgotten at once
            held.get(1).release();
            assertEquals(new RdmaNode.NodeMetrics(0, 0), p.serverNode.metrics());
            held.clear();
        } finally {
            held.forEach(RdmaMessage::release);
            p.close();
        }
    }
}
