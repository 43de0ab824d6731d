package io.rdmaflux.striping.connection;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.RendezvousMode;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The READ rendezvous (seed 001 &sect;3) on connections this module schedules on both sides
 * ({@code RailsChannelFactory.even()} for the client's spec and the server's accept factory): the
 * receiver splits its READs itself, evenly, and leaves the scheduler's own stripe policy (which serves
 * the send direction's engine) untouched; direct-buffer messages go by reference through the cache.
 * Virtual time, two rails.
 */
class ReadRendezvousStripedTest {
    private static final int SIZE = 256 * 1024;
    private static final int N = 24;

    @ParameterizedTest
    @EnumSource(value = RendezvousMode.class, names = {"WRITE", "READ"})
    void directBufferMessagesArriveInOrderOverTwoStripedRails(RendezvousMode mode) {
        VerbsLeakCheck leaks = VerbsLeakCheck.begin();
        SoftTwoNodes soft = SoftTwoNodes.create(2, RailConfig.builder().bandwidthBytesPerSec(1L << 30).latencyNs(2_000).build());
        RdmaNode client = null;
        RdmaNode server = null;
        try {
            client = node(soft, true);
            server = node(soft, false);
            RdmaNode c = client;
            RdmaNode s = server;
            BooleanSupplier[] until = new BooleanSupplier[1];
            Runnable run = () -> {
                for (int i = 0; i < 20_000_000 && !until[0].getAsBoolean(); i++) {
                    if (soft.progress() + c.invoke() + s.invoke() == 0) {
                        soft.clock().advance(1_000);
                    }
                }
            };
            RdmaServer listener = server.bind(new PortAddress("mem", soft.b().devices().get(0).name(), 0));
            AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
            AtomicReference<RdmaConnection> connected = new AtomicReference<>();
            AtomicReference<Throwable> error = new AtomicReference<>();
            listener.accept().subscribe(accepted::set);
            client.connect(listener.address(), ConnectionSpec.rails(2).striping(RailsChannelFactory.even()).rendezvous(mode))
                .subscribe(connected::set, error::set);
            until[0] = () -> (accepted.get() != null && connected.get() != null) || error.get() != null;
            run.run();
            assertNull(error.get());
            assertEquals(mode, accepted.get().rendezvousMode());
            ByteBuffer[] buffers = new ByteBuffer[3];
            for (int i = 0; i < buffers.length; i++) {
                buffers[i] = ByteBuffer.allocateDirect(SIZE).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                for (int k = 0; k < SIZE; k += 4) {
                    buffers[i].putInt(k, i * 1_000_003 + k);
                }
            }
            List<Integer> firstInts = new ArrayList<>();
            List<Integer> lastInts = new ArrayList<>();
            accepted.get().receive().subscribe(m -> {
                firstInts.add(m.content().getInt(0));
                lastInts.add(m.content().getInt(SIZE - 4));
                m.release();
            });
            AtomicBoolean sent = new AtomicBoolean();
            connected.get().send(Flux.range(0, N).map(i -> RdmaMessage.of(buffers[i % 3]))).subscribe(null, error::set, () -> sent.set(true));
            until[0] = () -> (sent.get() && firstInts.size() == N) || error.get() != null;
            run.run();
            assertNull(error.get());
            for (int i = 0; i < N; i++) {
                assertEquals((i % 3) * 1_000_003, firstInts.get(i), "message " + i + " in PSN order");
                assertEquals((i % 3) * 1_000_003 + SIZE - 4, lastInts.get(i), "message " + i + " whole");
            }
            assertEquals(3, client.registrationCacheStats().misses());
            assertEquals(N - 3, client.registrationCacheStats().hits());
            connected.get().close();
            accepted.get().close();
            until[0] = () -> false;
            for (int i = 0; i < 2000; i++) {
                if (soft.progress() + c.invoke() + s.invoke() == 0) {
                    soft.clock().advance(1_000);
                }
            }
        } finally {
            if (client != null) {
                client.close();
            }
            if (server != null) {
                server.close();
            }
            soft.close();
        }
        leaks.assertClean();
    }

    private static RdmaNode node(SoftTwoNodes soft, boolean isClient) {
        return RdmaNode.builder().provider(isClient ? soft.a() : soft.b()).name(isClient ? "client" : "server").ports(1, 2)
            .threadingMode(ThreadingMode.INVOKER).clock(soft.clock()).driveProvider(false).bufferBytes(64 * 1024)
            .maxMessageBytes(SIZE).rendezvousBuffers(4).acceptChannelFactory(RailsChannelFactory.even()).build();
    }
}
