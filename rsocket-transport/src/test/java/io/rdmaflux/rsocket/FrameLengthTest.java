package io.rdmaflux.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.rdmaflux.verbs.ThreadingMode;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.test.LeaksTrackingByteBufAllocator;
import io.rsocket.util.ByteBufPayload;
import io.rsocket.util.DefaultPayload;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The frame limit: its bounds, the check against the peer's maxMessageBytes, and frames at the limit by rendezvous. */
class FrameLengthTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private KitNodes nodes;
    private RdmaServerChannel server;
    private RSocket client;
    private final LeaksTrackingByteBufAllocator clientAlloc = LeaksTrackingByteBufAllocator.instrument(ByteBufAllocator.DEFAULT, TIMEOUT, "client");
    private final LeaksTrackingByteBufAllocator serverAlloc = LeaksTrackingByteBufAllocator.instrument(ByteBufAllocator.DEFAULT, TIMEOUT, "server");

    @AfterEach
    void close() {
        if (client != null) {
            client.dispose();
            client.onClose().onErrorResume(e -> Mono.empty()).block(TIMEOUT);
        }
        if (server != null) {
            server.dispose();
        }
        if (nodes != null) {
            nodes.close();
        }
        clientAlloc.assertHasNoLeaks();
        serverAlloc.assertHasNoLeaks();
    }

    @Test
    void aFrameLimitOutsideRSocketsRangeIsRefusedNamingTheValue() {
        nodes = KitNodes.mem(1, ThreadingMode.SHARED, b -> b);
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
            () -> RdmaClientTransport.create(nodes.client, nodes.bindAddress).maxFrameLength(10));
        assertTrue(small.getMessage().contains("maxFrameLength") && small.getMessage().contains("10"), small.getMessage());
        IllegalArgumentException large = assertThrows(IllegalArgumentException.class,
            () -> RdmaServerTransport.create(nodes.server, nodes.bindAddress).maxFrameLength(1 << 24));
        assertTrue(large.getMessage().contains("16777216") && large.getMessage().contains("24 bits"), large.getMessage());
    }

    @Test
    void aFrameLimitAboveThePeersMaxMessageBytesFailsTheConnectNamingBoth() {
        nodes = KitNodes.mem(1, ThreadingMode.SHARED, b -> b.maxMessageBytes(256 * 1024));
        server = bindEcho(RdmaServerTransport.create(nodes.server, nodes.bindAddress).maxFrameLength(256 * 1024));
        RuntimeException e = assertThrows(RuntimeException.class, () -> RSocketConnector.create()
            .connect(RdmaClientTransport.create(nodes.client, server.address()).allocator(clientAlloc)).block(TIMEOUT));
        String m = e.getMessage();
        assertTrue(m.contains("maxFrameLength 1048576") && m.contains("262144-byte maxMessageBytes") && m.contains("maxMessageBytes(1048576)"), m);
    }

    @Test
    void framesUpToTheLimitTravelByRendezvousByteExact() {
        nodes = KitNodes.mem(1, ThreadingMode.SHARED, b -> b);
        server = bindEcho(RdmaServerTransport.create(nodes.server, nodes.bindAddress).allocator(serverAlloc));
        client = RSocketConnector.create().connect(RdmaClientTransport.create(nodes.client, server.address()).allocator(clientAlloc)).block(TIMEOUT);
        assertNotNull(client);
        // RSocket counts a 3-byte length field, the 6-byte header and a 3-byte metadata length against the limit:
        // the last frame is exactly 1 MiB
        for (int len : new int[] {8168 - 9, 8168, 540_000, (1 << 20) - 12}) {
            byte[] data = new byte[len];
            byte[] metadata = new byte[len == (1 << 20) - 12 ? 0 : len % 7];
            ThreadLocalRandom.current().nextBytes(data);
            Payload back = client.requestResponse(ByteBufPayload.create(data, metadata)).block(TIMEOUT);
            assertNotNull(back);
            try {
                assertArrayEquals(data, bytes(back.data().nioBuffer()), "data of " + len);
                assertArrayEquals(metadata, bytes(back.metadata().nioBuffer()), "metadata of " + len);
            } finally {
                back.release();
            }
        }
        byte[] tooLarge = new byte[1 << 20];
        Exception e = assertThrows(Exception.class, () -> client.requestResponse(DefaultPayload.create(tooLarge)).block(TIMEOUT));
        assertTrue(String.valueOf(e.getMessage()).contains("too big to be send as a single frame"), String.valueOf(e));
    }

    private RdmaServerChannel bindEcho(RdmaServerTransport transport) {
        return RSocketServer.create(SocketAcceptor.forRequestResponse(p -> Mono.just(p)))
            .payloadDecoder(io.rsocket.frame.decoder.PayloadDecoder.ZERO_COPY)
            .bind(transport).block(TIMEOUT);
    }

    private static byte[] bytes(java.nio.ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

}
