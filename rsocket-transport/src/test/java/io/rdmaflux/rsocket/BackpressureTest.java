package io.rdmaflux.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.rdmaflux.core.ConnectionMetrics;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.verbs.ThreadingMode;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.test.LeaksTrackingByteBufAllocator;
import io.rsocket.util.ByteBufPayload;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A slow RSocket subscriber backpressures the remote producer through rdmaflux receive-buffer credits,
 * while RSocket's {@code request(n)} still bounds what the responder emits.
 *
 * <p>Two DEDICATED nodes on the in-JVM fabric (one progress thread each, so the client's can be held
 * while the server's keeps running). The client's subscriber blocks in {@code onNext} of its first
 * payload, on the client's progress thread, where RSocket delivers frames: no receive buffer is freed
 * and no credit returns. The server's RSocket emits what the client requested; its rdmaflux connection
 * sends at most the client's receive buffers and the rest waits, queued, at the server.
 */
class BackpressureTest {
    private static final int RECEIVE_BUFFERS = 16;
    private static final int SEND_QUEUE = 4;
    private static final int PAYLOAD_BYTES = 1024;
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private KitNodes nodes;
    private RdmaServerChannel server;
    private RSocket client;
    private final LeaksTrackingByteBufAllocator clientAlloc = LeaksTrackingByteBufAllocator.instrument(ByteBufAllocator.DEFAULT, TIMEOUT, "client");
    private final LeaksTrackingByteBufAllocator serverAlloc = LeaksTrackingByteBufAllocator.instrument(ByteBufAllocator.DEFAULT, TIMEOUT, "server");
    private final AtomicReference<RdmaDuplexConnection> serverConnection = new AtomicReference<>();
    private final AtomicReference<RdmaDuplexConnection> clientConnection = new AtomicReference<>();
    private final AtomicInteger emitted = new AtomicInteger();

    @BeforeEach
    void open() {
        nodes = KitNodes.mem(1, ThreadingMode.DEDICATED, b -> b.receiveBuffers(RECEIVE_BUFFERS).sendQueue(SEND_QUEUE));
        server = RSocketServer.create(SocketAcceptor.forRequestStream(request -> {
                int n = Integer.parseInt(request.getDataUtf8());
                request.release();
                return Flux.range(0, n).map(i -> ByteBufPayload.create(payload(i))).doOnNext(p -> emitted.incrementAndGet());
            }))
            .interceptors(r -> r.forConnection((type, c) -> {
                if (c instanceof RdmaDuplexConnection rc) {
                    serverConnection.set(rc);
                }
                return c;
            }))
            .bind(RdmaServerTransport.create(nodes.server, nodes.bindAddress).allocator(serverAlloc))
            .block(TIMEOUT);
        assertNotNull(server);
        client = RSocketConnector.create()
            .interceptors(r -> r.forConnection((type, c) -> {
                if (c instanceof RdmaDuplexConnection rc) {
                    clientConnection.set(rc);
                }
                return c;
            }))
            .connect(RdmaClientTransport.create(nodes.client, server.address()).allocator(clientAlloc))
            .block(TIMEOUT);
        assertNotNull(client);
    }

    @AfterEach
    void close() {
        client.dispose();
        server.dispose();
        client.onClose().block(TIMEOUT);
        RdmaDuplexConnection sc = serverConnection.get();
        if (sc != null) {
            sc.onClose().block(TIMEOUT);
        }
        nodes.close();
        clientAlloc.assertHasNoLeaks();
        serverAlloc.assertHasNoLeaks();
    }

    private static byte[] payload(int i) {
        byte[] b = new byte[PAYLOAD_BYTES];
        for (int k = 0; k < b.length; k++) {
            b[k] = (byte) (i + k);
        }
        return b;
    }

    @Test
    void aSubscriberBlockedInOnNextStallsTheRemoteSenderAtTheReceiveBuffers() throws Exception {
        int total = 2_000;
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        AtomicInteger received = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        client.requestStream(ByteBufPayload.create(Integer.toString(total))).subscribe(new BaseSubscriber<Payload>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                s.request(total);
            }

            @Override
            protected void hookOnNext(Payload p) {
                try {
                    int i = received.getAndIncrement();
                    if (!java.util.Arrays.equals(payload(i), bytes(p))) {
                        failure.compareAndSet(null, new AssertionError("payload " + i + " differs"));
                    }
                    if (i == 0) {
                        go.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    p.release();
                }
            }

            @Override
            protected void hookOnError(Throwable t) {
                failure.set(t);
                done.countDown();
            }

            @Override
            protected void hookOnComplete() {
                done.countDown();
            }
        });

        // the server's RSocket emits everything requested (RSocket's request(n) allows it) ...
        await("the responder emitted all " + total, () -> emitted.get() == total);
        RdmaDuplexConnection sc = serverConnection.get();
        // ... but its connection sends no more frames than the client's receive buffers, no more messages than
        // the credits the client granted before its progress thread stopped (messageCreditsPerBuffer per buffer:
        // small payloads travel packed), and takes no more than those plus its send queue: the rest waits at
        // the server, not in the client's memory. Watched for 200 ms of the stall.
        long credits = (long) io.rdmaflux.core.RdmaNode.DEFAULT_MESSAGE_CREDITS_PER_BUFFER * RECEIVE_BUFFERS;
        await("the server sent its credits' worth", () -> sc.rdmaConnection().metrics().framesSent(FrameType.DATA) >= RECEIVE_BUFFERS);
        long watchUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
        while (System.nanoTime() < watchUntil) {
            ConnectionMetrics m = sc.rdmaConnection().metrics();
            assertTrue(m.framesSent(FrameType.DATA) <= RECEIVE_BUFFERS, "sent " + m.framesSent(FrameType.DATA) + " DATA frames > "
                + RECEIVE_BUFFERS + " receive buffers of the client: " + m);
            assertTrue(m.messagesSent() <= credits, "sent " + m.messagesSent() + " messages > " + credits + " credits: " + m);
            int queued = sc.framesQueued();
            assertTrue(queued >= total - credits - SEND_QUEUE, "the server's connection took "
                + (total - queued) + " frames, above credits + send queue = " + (credits + SEND_QUEUE));
            Thread.onSpinWait();
        }
        ConnectionMetrics cm = clientConnection.get().rdmaConnection().metrics();
        assertTrue(cm.receiveBuffersHeld() <= RECEIVE_BUFFERS, "client holds " + cm.receiveBuffersHeld());
        assertEquals(1, received.get(), "the subscriber is still in its first onNext");

        go.countDown();
        assertTrue(done.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), "stream completes once the subscriber goes on");
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(total, received.get());
        assertEquals(0, sc.framesQueued());
    }

    @Test
    void rsocketRequestNStillBoundsWhatTheResponderEmits() throws Exception {
        int requested = 5;
        CountDownLatch got = new CountDownLatch(requested);
        AtomicReference<Subscription> subscription = new AtomicReference<>();
        client.requestStream(ByteBufPayload.create("1000")).subscribe(new BaseSubscriber<Payload>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                subscription.set(s);
                s.request(requested);
            }

            @Override
            protected void hookOnNext(Payload p) {
                p.release();
                got.countDown();
            }
        });
        assertTrue(got.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        // credits were plenty (16 free buffers): only RSocket's request(5) held the responder back
        assertEquals(requested, emitted.get());
        assertEquals(0, serverConnection.get().framesQueued());
        subscription.get().cancel();
    }

    private static byte[] bytes(Payload p) {
        byte[] b = new byte[p.data().readableBytes()];
        p.data().getBytes(p.data().readerIndex(), b);
        return b;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + TIMEOUT + ": " + what);
            }
            Thread.sleep(1);
        }
    }
}
