package io.rdmaflux.core;

import io.rdmaflux.core.frame.FrameType;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Frames are counted by type as they are posted, whichever way they went out (held back by selective
 * signaling or posted at once): what one side counts as sent of each type, the other counts as
 * received once everything arrived. INVOKER mode, virtual time.
 */
class FramesByTypeTest {
    @Test
    void everyFrameTypeSentIsCountedAsTheOtherSideReceivesIt() {
        InvokerPair p = InvokerPair.open(b -> b.bufferBytes(1024).maxMessageBytes(64 * 1024).rendezvousBuffers(2));
        try {
            AtomicInteger received = new AtomicInteger();
            p.server.receive().subscribe(m -> {
                m.release();
                received.incrementAndGet();
            });
            // small messages (DATA, some packed), one fragmented, one by rendezvous (RTS, CTS, FIN)
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.concat(Flux.range(0, 20).map(i -> RdmaMessage.of(new byte[16])),
                Mono.fromSupplier(() -> RdmaMessage.of(new byte[900])), Mono.fromSupplier(() -> RdmaMessage.of(new byte[20_000])))));
            p.runUntil(() -> sent.completed() && received.get() == 22);
            p.client.close();
            p.drive();
            assertTrue(p.client.isDisposed() && p.server.isDisposed());

            ConnectionMetrics client = p.client.metrics();
            ConnectionMetrics server = p.server.metrics();
            for (FrameType t : FrameType.values()) {
                assertEquals(client.framesSent(t), server.framesReceived(t), "client -> server " + t);
                assertEquals(server.framesSent(t), client.framesReceived(t), "server -> client " + t);
            }
            assertEquals(1, client.framesSent(FrameType.RTS));
            assertEquals(1, server.framesSent(FrameType.CTS));
            assertEquals(1, client.framesSent(FrameType.FIN));
            assertTrue(client.framesSent(FrameType.DATA) >= 2, client.framesSent().toString());
            assertTrue(client.framesSent(FrameType.CLOSE) >= 1 && server.framesSent(FrameType.CLOSE) >= 1);
            assertTrue(server.framesSent(FrameType.CREDIT) >= 1, "one-way traffic returns credits in CREDIT frames");
            assertEquals(0, client.framesSent(FrameType.RAIL_DOWN));
        } finally {
            p.close();
        }
    }
}
