package io.rdmaflux.core;

import io.rdmaflux.core.internal.onesided.UncheckedOperations;
import io.rdmaflux.core.onesided.Epoch;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.RealTimePair;
import io.rdmaflux.verbs.MemoryRegion;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * One-sided RDMA on the IP fabric (RC over TCP over loopback, real time, DEDICATED progress threads): the
 * receiving soft NIC places puts, serves gets and runs atomics with no consumer code, and refuses an RDMA that the
 * exposure's registration does not allow.
 */
class NetOneSidedTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void putGetAndFenceOverTwoNetRails() {
        try (RealTimePair p = RealTimePair.net(PairOptions.rails(2))) {
            int size = 1 << 20;
            MemoryRegion target = OneSidedTest.region(p.serverNode(), size);
            MemoryRegion source = OneSidedTest.region(p.clientNode(), size);
            MemoryRegion back = OneSidedTest.region(p.clientNode(), size);
            byte[] data = RendezvousTest.pattern(size, 21);
            OneSidedTest.fill(source, 0, data);
            p.server().expose(target, RemoteAccess.READ_WRITE).block(WAIT);
            RemoteRegion user = p.client().remoteRegions().blockFirst(WAIT);
            p.client().put(source, 0, user, 0, size).block(WAIT);
            Epoch e = p.client().fence().block(WAIT);
            assertEquals(1, e.puts());
            assertEquals(size, e.bytesPut());
            assertEquals(0b11, e.railMask());
            assertEquals(e, p.server().epochs().blockFirst(WAIT));
            assertArrayEquals(data, OneSidedTest.read(target, 0, size));
            p.client().get(back, 0, user, 0, size).block(WAIT);
            assertArrayEquals(data, OneSidedTest.read(back, 0, size));
        }
    }

    @Test
    void atomicsOverTwoNetRailsRunOnceEachAtTheResponder() {
        try (RealTimePair p = RealTimePair.net(PairOptions.rails(2))) {
            MemoryRegion target = OneSidedTest.region(p.serverNode(), 64);
            p.server().expose(target, RemoteAccess.ATOMIC).block(WAIT);
            RemoteRegion user = p.client().remoteRegions().blockFirst(WAIT);
            int n = 500;
            java.util.List<Long> olds = reactor.core.publisher.Flux.range(0, n).flatMap(i -> p.client().fetchAndAdd(user, 8, 1))
                .collectList().block(WAIT);
            assertEquals(n, new java.util.HashSet<>(olds).size(), "every fetch-and-add saw another value");
            assertEquals(n, target.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(8));
            assertEquals((long) n, p.client().compareAndSwap(user, 8, n, -1).block(WAIT));
            assertEquals(-1L, target.buffer().order(java.nio.ByteOrder.nativeOrder()).getLong(8));
        }
    }

    @Test
    void theNetNicRefusesAWriteToAReadOnlyExposure() {
        try (RealTimePair p = RealTimePair.net(PairOptions.rails(1))) {
            MemoryRegion target = OneSidedTest.region(p.serverNode(), 8192);
            MemoryRegion source = OneSidedTest.region(p.clientNode(), 8192);
            OneSidedTest.fill(source, 0, RendezvousTest.pattern(8192, 22));
            p.server().expose(target, 0, 4096, RemoteAccess.READ).block(WAIT);
            RemoteRegion user = p.client().remoteRegions().blockFirst(WAIT);
            RemoteRegion forged = UncheckedOperations.forge(OneSidedTest.engine(p.client()), user, 8192, RemoteAccess.READ_WRITE);
            assertThrows(RuntimeException.class,
                () -> UncheckedOperations.put(OneSidedTest.engine(p.client()), source, 0, forged, 0, 8192).block(WAIT));
            assertArrayEquals(new byte[8192], OneSidedTest.read(target, 0, 8192));
        }
    }
}
