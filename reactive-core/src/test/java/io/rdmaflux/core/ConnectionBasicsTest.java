package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectionBasicsTest {
    /**
     * {@link RdmaConnection#rendezvousMode()} has a default (WRITE) that the connection must override with what the
     * handshake agreed: a connection whose spec asks for READ (both nodes speak it, the default kind can READ)
     * reports READ on both sides, one with the default spec WRITE.
     */
    @Test
    void connectionsReportTheRendezvousModeTheirSpecAskedForOnBothSides() {
        for (RendezvousMode mode : new RendezvousMode[] {RendezvousMode.READ, RendezvousMode.AUTO}) {
            try (InvokerPair p = InvokerPair.open(1, ConnectionSpec.rails(1).rendezvous(mode), b -> { })) {
                assertEquals(mode, p.client.rendezvousMode(), "the connecting side");
                assertEquals(mode, p.server.rendezvousMode(), "the accepting side: the connecting side's mode");
            }
        }
        try (InvokerPair p = InvokerPair.open()) {
            assertEquals(RendezvousMode.WRITE, p.client.rendezvousMode(), "the default, connecting side");
            assertEquals(RendezvousMode.WRITE, p.server.rendezvousMode(), "the default, accepting side");
        }
    }

    @Test
    void messagesArriveInOrderAndSendCompletes() {
        try (InvokerPair p = InvokerPair.open()) {
            List<String> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 100).map(i -> RdmaMessage.of("m" + i))));
            p.runUntil(() -> sent.completed() && got.size() == 100);
            for (int i = 0; i < 100; i++) {
                assertEquals("m" + i, got.get(i));
            }
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void largeMessagesAreFragmentedAndReassembled() {
        try (InvokerPair p = InvokerPair.open(b -> b.bufferBytes(256).receiveBuffers(4).maxMessageBytes(100_000))) {
            byte[] big = new byte[100_000];
            for (int i = 0; i < big.length; i++) {
                big[i] = (byte) (i * 31);
            }
            AtomicReference<byte[]> got = new AtomicReference<>();
            p.server.receive().subscribe(m -> {
                got.set(m.toByteArray());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Mono.just(RdmaMessage.of(big))));
            p.runUntil(() -> sent.completed() && got.get() != null);
            assertTrue(java.util.Arrays.equals(big, got.get()));
        }
    }

    @Test
    void messageAboveMaxFailsOnlyThatSendAndTheConnectionStaysUsable() {
        try (InvokerPair p = InvokerPair.open(b -> b.maxMessageBytes(1000))) {
            List<String> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            });
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.just(RdmaMessage.of(new byte[1001]))).subscribe(null, error::set);
            p.drive();
            MessageTooLargeException e = assertInstanceOf(MessageTooLargeException.class, error.get());
            assertTrue(e.getMessage().contains("1001") && e.getMessage().contains("1000"), e.getMessage());
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.just(RdmaMessage.of("after"))));
            p.runUntil(() -> sent.completed() && got.size() == 1);
            assertEquals(List.of("after"), got);
        }
    }

    @Test
    void gracefulCloseCompletesReceiveAfterDrainingAndOnCloseOnBothSides() {
        try (InvokerPair p = InvokerPair.open()) {
            List<String> got = new ArrayList<>();
            AtomicBoolean completed = new AtomicBoolean();
            p.server.receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            }, null, () -> completed.set(true));
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 10).map(i -> RdmaMessage.of("x" + i))));
            p.client.close();
            AtomicBoolean closedA = new AtomicBoolean();
            AtomicBoolean closedB = new AtomicBoolean();
            p.client.onClose().subscribe(null, null, () -> closedA.set(true));
            p.server.onClose().subscribe(null, null, () -> closedB.set(true));
            p.runUntil(() -> sent.completed() && completed.get() && closedA.get() && closedB.get());
            assertEquals(10, got.size());
        }
    }

    @Test
    void doubleReleaseNamesTheMessage() {
        try (InvokerPair p = InvokerPair.open()) {
            AtomicReference<RdmaMessage> got = new AtomicReference<>();
            p.server.receive().subscribe(got::set);
            SendOutcome sentOnce = SendOutcome.of(p.client.send(Mono.just(RdmaMessage.of("once"))));
            p.runUntil(() -> sentOnce.completed() && got.get() != null);
            RdmaMessage m = got.get();
            assertTrue(m.release());
            IllegalReferenceCountException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalReferenceCountException.class, m::release);
            assertTrue(e.getMessage().contains("psn=0") && e.getMessage().contains("released twice"), e.getMessage());
            assertEquals(0, m.refCnt());
            p.drive();
            assertEquals(0, p.serverNode.metrics().buffersOutstanding(), "the receive buffer went back once, not twice");
            got.set(null);
            SendOutcome sentAgain = SendOutcome.of(p.client.send(Mono.just(RdmaMessage.of("again"))));
            p.runUntil(() -> sentAgain.completed() && got.get() != null);
            String again = got.get().asString();
            got.get().release();
            assertEquals("again", again, "the second release changed nothing: the connection goes on");
        }
    }
}
