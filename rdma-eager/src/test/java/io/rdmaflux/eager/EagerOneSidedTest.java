package io.rdmaflux.eager;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.onesided.Epoch;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.core.tck.TckPayload;
import io.rdmaflux.verbs.MemoryRegion;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One-sided put/get/atomics/fence (seed 002) on an eager connection (seed 001), in virtual time: the eager
 * channel forwards one-sided work to its RC queue pair, and the one-sided WRITEs' completions are told
 * apart from the ring's (selectively signalled) WRITEs by tag, while small messages keep using the ring.
 */
class EagerOneSidedTest {
    private static final ConnectionSpec EAGER = ConnectionSpec.defaults().channelKind(ChannelKind.EAGER_RDMA);

    private static <T> @Nullable T await(EagerBed bed, Mono<T> mono) {
        AtomicReference<T> value = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        AtomicBoolean done = new AtomicBoolean();
        mono.subscribe(value::set, e -> {
            error.set(e);
            done.set(true);
        }, () -> done.set(true));
        bed.runUntil(done::get);
        assertNull(error.get(), () -> "expected success but got " + error.get());
        return value.get();
    }

    private static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    private static byte[] read(MemoryRegion r, int offset, int length) {
        byte[] out = new byte[length];
        ByteBuffer b = r.buffer();
        b.position(offset);
        b.get(out);
        return out;
    }

    @Test
    void putGetAndFenceWorkOnAnEagerRailWhileSmallMessagesUseTheRing() {
        try (EagerBed bed = EagerBed.open()) {
            RdmaConnection[] c = bed.connect(EAGER);
            EagerBed.Holder h = new EagerBed.Holder(64, true);
            c[1].receive().subscribe(h);
            h.request(Long.MAX_VALUE);
            MemoryRegion target = bed.serverNode.registerMemory(ByteBuffer.allocateDirect(64 * 1024));
            MemoryRegion source = bed.clientNode.registerMemory(ByteBuffer.allocateDirect(64 * 1024));
            MemoryRegion back = bed.clientNode.registerMemory(ByteBuffer.allocateDirect(64 * 1024));
            List<RemoteRegion> seen = new ArrayList<>();
            c[0].remoteRegions().subscribe(seen::add);
            List<Epoch> epochs = new ArrayList<>();
            c[1].epochs().subscribe(epochs::add);
            await(bed, c[1].expose(target, RemoteAccess.READ_WRITE_ATOMIC));
            bed.runUntil(() -> !seen.isEmpty());
            RemoteRegion remote = seen.get(0);

            AtomicReference<Throwable> err = new AtomicReference<>();
            c[0].send(Flux.range(0, 200).map(i -> TckPayload.message(i, 64))).subscribe(v -> { }, err::set);
            for (int i = 0; i < 8; i++) {
                byte[] data = pattern(4096 + i * 977, i);
                source.buffer().clear().position(0);
                source.buffer().put(data);
                await(bed, c[0].put(source, 0, remote, i * 1000L, data.length));
                assertArrayEquals(data, read(target, i * 1000, data.length), "put " + i);
                await(bed, c[0].get(back, 0, remote, i * 1000L, data.length));
                assertArrayEquals(data, read(back, 0, data.length), "get " + i);
            }
            target.buffer().order(java.nio.ByteOrder.nativeOrder()).putLong(60_000, 40);
            assertEquals(40L, await(bed, c[0].fetchAndAdd(remote, 60_000, 2)));
            assertEquals(42L, await(bed, c[0].compareAndSwap(remote, 60_000, 42, 7)));
            assertEquals(7L, target.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(60_000));
            Epoch epoch = await(bed, c[0].fence());
            assertTrue(epoch != null);
            bed.runUntil(() -> !epochs.isEmpty() && h.seqs.size() == 200 || err.get() != null);
            assertNull(err.get());
            assertEquals(200, h.seqs.size());
            assertEquals(List.of(), h.mismatches);
            EagerStats client = bed.clientEager.channels().get(0).stats();
            assertTrue(client.ringFramesSent() > 0, "small messages still took the ring: " + client);
            target.close();
            source.close();
            back.close();
        }
    }

    @Test
    void aWriteTagInTheRingsHalfIsRefusedNamingTheRange() {
        try (EagerBed bed = EagerBed.open()) {
            bed.connect(EAGER);
            EagerChannel ch = bed.clientEager.channels().get(0);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ch.postWrite(0, 0, 0, 0, 0, RingSender.TAG_BASE + 1));
            assertTrue(e.getMessage().contains("[0, 2^27)"), e.getMessage());
            assertTrue(ch.carriesOneSided());
        }
    }
}
