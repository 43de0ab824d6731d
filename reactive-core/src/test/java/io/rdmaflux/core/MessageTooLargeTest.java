package io.rdmaflux.core;

import io.rdmaflux.core.frame.FrameType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A message above {@code maxMessageBytes} fails only the send that carried it, with a message naming
 * both sizes and the fix, on whichever path a message of the maximum size takes; the connection
 * then carries a message of exactly the maximum size.
 */
class MessageTooLargeTest {
    private static final int MAX = 1000;

    enum Path {
        /** 8 KiB buffers: the maximum fits one DATA frame. */
        SINGLE_FRAME(8192, 4, FrameType.DATA, 1),
        /** 256-byte buffers, rendezvous off: the maximum is 5 DATA fragments. */
        FRAGMENTS(256, 0, FrameType.DATA, 5),
        /** 256-byte buffers: the maximum goes by rendezvous, one RTS. */
        RENDEZVOUS(256, 4, FrameType.RTS, 1);

        final int bufferBytes;
        final int rendezvousBuffers;
        final FrameType carrier;
        final int framesOfTheMaximum;

        Path(int bufferBytes, int rendezvousBuffers, FrameType carrier, int framesOfTheMaximum) {
            this.bufferBytes = bufferBytes;
            this.rendezvousBuffers = rendezvousBuffers;
            this.carrier = carrier;
            this.framesOfTheMaximum = framesOfTheMaximum;
        }
    }

    private static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int k = 0; k < length; k++) {
            b[k] = (byte) (seed + k * 3);
        }
        return b;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Path.class)
    void aMessageAboveTheMaximumFailsOnlyItsSendAndTheMaximumStillGoes(Path path) {
        try (InvokerPair p = InvokerPair.open(b -> b.bufferBytes(path.bufferBytes).rendezvousBuffers(path.rendezvousBuffers)
            .maxMessageBytes(MAX))) {
            List<byte[]> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.toByteArray());
                m.release();
            });
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.just(RdmaMessage.of(pattern(10, 1)), RdmaMessage.of(pattern(MAX + 1, 2)), RdmaMessage.of(pattern(10, 3))))
                .subscribe(null, error::set);
            p.drive();
            MessageTooLargeException e = assertInstanceOf(MessageTooLargeException.class, error.get());
            assertTrue(e.getMessage().contains((MAX + 1) + " bytes") && e.getMessage().contains(MAX + " bytes")
                && e.getMessage().contains("maxMessageBytes"), e.getMessage());
            assertEquals(1, got.size(), "the message before the large one arrived, the one after it was not sent");
            assertArrayEquals(pattern(10, 1), got.get(0));
            assertFalse(p.client.isDisposed());

            long carriersBefore = p.client.metrics().framesSent(path.carrier);
            SendOutcome sent = SendOutcome.of(p.client.send(Mono.just(RdmaMessage.of(pattern(MAX, 4)))));
            p.runUntil(() -> sent.completed() && got.size() == 2);
            assertArrayEquals(pattern(MAX, 4), got.get(1));
            assertEquals(path.framesOfTheMaximum, p.client.metrics().framesSent(path.carrier) - carriersBefore,
                "the maximum took the " + path + " path");
        }
    }
}
