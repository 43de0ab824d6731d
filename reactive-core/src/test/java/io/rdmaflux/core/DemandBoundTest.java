package io.rdmaflux.core;

import io.rdmaflux.core.frame.FrameHeader;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Message credits bound what arrives by the subscriber's demand on every path a message takes: a
 * subscriber that requested {@code d} messages and holds them has exactly {@code d} in the connection,
 * and the next one does not start (no first fragment, no RTS) until it asks for more.
 */
class DemandBoundTest {
    private static final int BUFFER_BYTES = 256;
    private static final int PAYLOAD = BUFFER_BYTES - FrameHeader.LENGTH;
    private static final int DEMAND = 2;
    private static final int N = 6;

    enum Path {
        /** One DATA frame per message (packed when several fit). */
        SINGLE_FRAME(100, 4),
        /** Five DATA fragments per message, rendezvous off. */
        FRAGMENTS(4 * PAYLOAD + 1, 0),
        /** RTS, CTS, RDMA WRITE, FIN. */
        RENDEZVOUS(4 * PAYLOAD + 1, 4);

        final int lengthBytes;
        final int rendezvousBuffers;

        Path(int lengthBytes, int rendezvousBuffers) {
            this.lengthBytes = lengthBytes;
            this.rendezvousBuffers = rendezvousBuffers;
        }
    }

    private static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int k = 0; k < length; k++) {
            b[k] = (byte) (seed * 13 + k);
        }
        return b;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Path.class)
    void aSubscriberHoldingWhatItRequestedGetsNoMoreMessagesIntoTheConnection(Path path) {
        try (InvokerPair p = InvokerPair.open(b -> b.bufferBytes(BUFFER_BYTES).receiveBuffers(4)
            .rendezvousBuffers(path.rendezvousBuffers).maxMessageBytes(8 * PAYLOAD))) {
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, N).map(i -> RdmaMessage.of(pattern(path.lengthBytes, i)))));
            List<RdmaMessage> held = new ArrayList<>();
            StepVerifier.create(p.server.receive(), DEMAND)
                .then(() -> {
                    for (int i = 0; i < 20; i++) {
                        p.drive();
                    }
                })
                .consumeNextWith(held::add)
                .consumeNextWith(held::add)
                .then(() -> {
                    assertEquals(DEMAND, p.client.metrics().messagesSent(), "messages started with demand " + DEMAND + " held");
                    assertEquals(DEMAND, p.server.metrics().messagesReceived());
                    assertTrue(p.serverNode.metrics().buffersOutstanding() <= DEMAND, "held " + p.serverNode.metrics().buffersOutstanding());
                    for (int i = 0; i < DEMAND; i++) {
                        assertArrayEquals(pattern(path.lengthBytes, i), held.get(i).toByteArray());
                        held.get(i).release();
                    }
                })
                .thenRequest(N - DEMAND)
                .then(p::drive)
                .thenConsumeWhile(m -> {
                    int i = m.psn();
                    assertArrayEquals(pattern(path.lengthBytes, i), m.toByteArray());
                    m.release();
                    return i < N - 1;
                })
                .then(() -> assertTrue(sent.completed()))
                .thenCancel()
                .verify();
            assertEquals(N, p.server.metrics().messagesReceived());
        }
    }
}
