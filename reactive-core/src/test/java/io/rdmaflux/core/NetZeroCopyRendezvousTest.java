package io.rdmaflux.core;

import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.HandshakeCodec;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.RealTimePair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.core.publisher.Flux;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Direct-buffer messages sent by reference through the registration cache over the IP fabric (RC over
 * TCP on 127.0.0.1, real time): the soft NIC's RDMA WRITE and RDMA READ across two processes' worth of
 * sockets, 1 and 2 rails. Plus the negotiation's fallback to WRITE for a peer without the READ rendezvous.
 */
class NetZeroCopyRendezvousTest {
    private static final int MESSAGE = 256 * 1024;

    @ParameterizedTest(name = "{0}, {1} rails")
    @CsvSource({"WRITE, 1", "READ, 1", "WRITE, 2", "READ, 2"})
    void rotatingDirectBuffersArriveIntactByReference(RendezvousMode mode, int rails) {
        try (RealTimePair p = RealTimePair.net(PairOptions.rails(rails)
                .node(b -> b.maxMessageBytes(MESSAGE).rendezvousBuffers(2))
                .spec(s -> s.rendezvous(mode)))) {
            ByteBuffer[] buffers = new ByteBuffer[3];
            for (int i = 0; i < buffers.length; i++) {
                buffers[i] = ByteBuffer.allocateDirect(MESSAGE).put(RendezvousTest.pattern(MESSAGE, i)).clear();
            }
            List<byte[]> got = new CopyOnWriteArrayList<>();
            p.server().receive().subscribe(m -> {
                got.add(m.toByteArray());
                m.release();
            });
            p.client().send(Flux.range(0, 12).map(i -> RdmaMessage.of(buffers[i % 3]))).block(Duration.ofSeconds(20));
            p.await("12 messages received", () -> got.size() == 12);
            for (int i = 0; i < 12; i++) {
                assertArrayEquals(RendezvousTest.pattern(MESSAGE, i % 3), got.get(i), "message " + i);
            }
            RegistrationCacheStats s = p.clientNode().registrationCacheStats();
            assertEquals(3, s.misses(), s.toString());
            assertEquals(9, s.hits(), s.toString());
            assertEquals(mode == RendezvousMode.READ ? 12 : 0, p.client().metrics().framesSent(FrameType.RTS_READ));
        }
    }

    @Test
    void aPeerWithoutTheReadRendezvousGetsWrite() {
        HandshakeCodec old = new HandshakeCodec(1, 4096, 64, 0, 1 << 20, 4, List.of(1));
        HandshakeCodec current = new HandshakeCodec(1, 4096, 64, 0, 1 << 20, 4, List.of(1), HandshakeCodec.features(true, 0));
        List<io.rdmaflux.core.channel.ChannelKind> rc = List.of(io.rdmaflux.core.channel.ChannelKind.RC_SEND_RECV);
        assertEquals(RendezvousMode.WRITE, ConnectionEstablishment.agreed(RendezvousMode.READ, old, rc), "an old peer: WRITE");
        assertEquals(RendezvousMode.WRITE, ConnectionEstablishment.agreed(RendezvousMode.AUTO, old, rc));
        assertEquals(RendezvousMode.READ, ConnectionEstablishment.agreed(RendezvousMode.READ, current, rc));
        assertEquals(RendezvousMode.AUTO, ConnectionEstablishment.agreed(RendezvousMode.AUTO, current, rc));
        assertEquals(RendezvousMode.WRITE, ConnectionEstablishment.agreed(RendezvousMode.WRITE, current, rc));
    }
}
