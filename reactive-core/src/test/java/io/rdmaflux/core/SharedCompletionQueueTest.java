package io.rdmaflux.core;

import io.rdmaflux.core.internal.cq.SharedCompletionQueue;
import io.rdmaflux.core.internal.srq.RailSharedBuffers;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One CQ per device shared by every connection of a node, completions dispatched by QP number. */
class SharedCompletionQueueTest {
    /**
     * 300 connections (300 QPs on each node, all on one CQ per node): each carries 3 messages naming it, both
     * ways at once; every message reaches the connection it was sent on, in order, and closing them all
     * leaves the CQ serving none, with no completion lost on the way (none for an unknown QP).
     */
    @Test
    void hundredsOfQueuePairsOnOneCqEachGetTheirOwnCompletions() {
        int n = Integer.getInteger("cqTestQps", 300);
        try (InvokerPeers p = new InvokerPeers(b -> b.sharedCompletionQueue(n).sharedReceiveQueue(1024).receiveBuffers(4)
            .sendBuffers(4).controlBuffers(4).rendezvousBuffers(1))) {
            List<RdmaConnection[]> cs = new ArrayList<>();
            List<List<String>> gotServer = new ArrayList<>();
            List<List<String>> gotClient = new ArrayList<>();
            List<SendOutcome> sends = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                RdmaConnection[] c = p.connect(ConnectionSpec.defaults());
                cs.add(c);
                List<String> s = new ArrayList<>();
                List<String> k = new ArrayList<>();
                gotServer.add(s);
                gotClient.add(k);
                c[1].receive().subscribe(m -> {
                    s.add(m.asString());
                    m.release();
                });
                c[0].receive().subscribe(m -> {
                    k.add(m.asString());
                    m.release();
                });
            }
            SharedCompletionQueue clientCq = p.clientNode.sharedCompletionQueue();
            SharedCompletionQueue serverCq = p.serverNode.sharedCompletionQueue();
            assertNotNull(clientCq);
            assertEquals(n, clientCq.queuePairs());
            assertEquals(n, serverCq.queuePairs());
            for (int i = 0; i < n; i++) {
                int id = i;
                sends.add(SendOutcome.of(cs.get(i)[0].send(Flux.range(0, 3).map(j -> RdmaMessage.of("to s" + id + "/" + j)))));
                sends.add(SendOutcome.of(cs.get(i)[1].send(Flux.range(0, 3).map(j -> RdmaMessage.of("to c" + id + "/" + j)))));
            }
            p.runUntil(() -> sends.stream().allMatch(o -> o.completed() || o.error() != null)
                && gotServer.stream().allMatch(l -> l.size() == 3) && gotClient.stream().allMatch(l -> l.size() == 3));
            for (SendOutcome o : sends) {
                assertTrue(o.error() == null, () -> "a send failed: " + o.error());
            }
            for (int i = 0; i < n; i++) {
                assertEquals(List.of("to s" + i + "/0", "to s" + i + "/1", "to s" + i + "/2"), gotServer.get(i));
                assertEquals(List.of("to c" + i + "/0", "to c" + i + "/1", "to c" + i + "/2"), gotClient.get(i));
            }
            assertTrue(serverCq.dispatched() >= 3L * n, "completions dispatched: " + serverCq.dispatched());
            for (RdmaConnection[] c : cs) {
                c[0].close();
            }
            p.drive();
            assertEquals(0, clientCq.queuePairs());
            assertEquals(0, serverCq.queuePairs());
            assertEquals(0, clientCq.orphans() + serverCq.orphans(), "completions for no known QP");
            RailSharedBuffers srq = p.serverNode.sharedBuffers().existing(0);
            assertEquals(1024, srq.receive().posted(), "every SRQ buffer is back: " + srq.receive());
        }
    }

    /** An aborted connection's completions still in the shared CQ give their SRQ buffers back. */
    @Test
    void anAbortedConnectionsReceivesInTheSharedCqReturnToTheSrq() {
        try (InvokerPeers p = new InvokerPeers(b -> b.sharedCompletionQueue(4).sharedReceiveQueue(64))) {
            RdmaConnection[] c = p.connect(ConnectionSpec.defaults());
            List<RdmaMessage> held = new ArrayList<>();
            c[1].receive().subscribe(held::add);
            SendOutcome sent = SendOutcome.of(c[0].send(Flux.range(0, 4_000).map(j -> RdmaMessage.of("m" + j))));
            // a few passes only: frames in flight, completions waiting in the CQs
            for (int i = 0; i < 40; i++) {
                p.pass();
            }
            c[1].abort();
            held.forEach(RdmaMessage::release);
            p.drive();
            assertNotNull(sent.error());
            RailSharedBuffers srq = p.serverNode.sharedBuffers().existing(0);
            assertEquals(64, srq.receive().posted(), "every SRQ buffer is back: " + srq.receive());
            assertEquals(0, srq.receive().budget().held());
            assertEquals(0, p.serverNode.sharedCompletionQueue().queuePairs());
        }
    }

    @Test
    void aConnectionBeyondTheQueuePairsTheCqServesFailsNamingTheOption() {
        try (InvokerPeers p = new InvokerPeers(b -> b.sharedCompletionQueue(2))) {
            p.connect(ConnectionSpec.defaults());
            p.connect(ConnectionSpec.defaults());
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.clientNode.connect(p.listener.address(), ConnectionSpec.defaults()).subscribe(c -> { }, error::set);
            p.drive();
            RdmaException e = assertInstanceOf(RdmaException.class, error.get());
            assertEquals(RdmaException.Category.CONFIGURATION, e.category());
            assertTrue(e.getMessage().contains("sharedCompletionQueue") && e.getMessage().contains("2 queue pairs"), e.getMessage());
            assertEquals(2, p.clientNode.sharedCompletionQueue().queuePairs(), "the refused channel took no place");
        }
    }
}
