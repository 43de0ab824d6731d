package io.rdmaflux.core;

import io.rdmaflux.core.internal.onesided.UncheckedOperations;
import io.rdmaflux.core.onesided.Epoch;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteAccessException;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftPort;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static io.rdmaflux.core.OneSidedTest.await;
import static io.rdmaflux.core.OneSidedTest.awaitError;
import static io.rdmaflux.core.OneSidedTest.engine;
import static io.rdmaflux.core.OneSidedTest.exposeToClient;
import static io.rdmaflux.core.OneSidedTest.pair;
import static io.rdmaflux.core.OneSidedTest.region;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One-sided atomics on the connection ({@code fetchAndAdd}, {@code compareAndSwap}) in virtual time on
 * INVOKER nodes: results and the exact sum over two rails, the fence waiting for atomics, every refusal
 * (misaligned word, past the end, an exposure without ATOMIC, after revoke, a provider without atomics)
 * as a clear error with nothing posted, the owner's NIC refusing a peer that skips the checks, and an
 * atomic whose rail dies failing instead of running twice.
 */
class OneSidedAtomicsTest {
    private static long word(MemoryRegion r, int offset) {
        return r.buffer().order(ByteOrder.nativeOrder()).getLong(offset);
    }

    private static void setWord(MemoryRegion r, int offset, long value) {
        r.buffer().order(ByteOrder.nativeOrder()).putLong(offset, value);
    }

    @Test
    void fetchAndAddsOverTwoRailsReturnDistinctOldValuesAndTheExactSumAndTheFenceWaitsForThem() {
        try (InvokerPair p = pair(2)) {
            MemoryRegion target = region(p.serverNode, 4096);
            setWord(target, 64, 1_000);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.READ_WRITE_ATOMIC)[1];
            int n = 200;
            List<Long> olds = new ArrayList<>();
            await(p, Flux.range(0, n).flatMap(i -> p.client.fetchAndAdd(user, 64, 3)).doOnNext(olds::add).then());
            Epoch epoch = await(p, p.client.fence());
            assertEquals(1_000 + 3L * n, word(target, 64));
            Set<Long> distinct = new HashSet<>(olds);
            assertEquals(n, distinct.size(), "every fetch-and-add saw another value");
            for (long v : distinct) {
                assertTrue(v >= 1_000 && v < 1_000 + 3L * n && (v - 1_000) % 3 == 0, "old value " + v);
            }
            assertEquals(0b11L, epoch.railMask(), "atomics went on both rails and the epoch synchronized on both");
            assertEquals(0, epoch.puts());
            assertEquals(n, engine(p.client).atomicsCompleted());
            assertEquals(0, word(target, 56));
            assertEquals(0, word(target, 72));
        }
    }

    @Test
    void compareAndSwapSwapsOnlyWhenTheWordMatchesAndReturnsTheOldValue() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 64);
            setWord(target, 0, 7);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.ATOMIC)[1];
            assertEquals(7L, await(p, p.client.compareAndSwap(user, 0, 7, 8)));
            assertEquals(8L, await(p, p.client.compareAndSwap(user, 0, 7, 9)), "no match: the current value comes back");
            assertEquals(8, word(target, 0));
            assertEquals(8L, await(p, p.client.fetchAndAdd(user, 0, -10)));
            assertEquals(-2, word(target, 0), "two's complement, wrapping");
        }
    }

    @Test
    void aMisalignedWordIsRefusedNamingTheOffsetAndTheFix() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 64);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.ATOMIC)[1];
            RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, awaitError(p, p.client.fetchAndAdd(user, 12, 1)));
            assertEquals(RemoteAccessException.Reason.ALIGNMENT, e.reason());
            assertTrue(e.getMessage().contains("remote offset 12") && e.getMessage().contains("e.g. 8"), e.getMessage());
            assertEquals(0, engine(p.client).atomicsInFlight() + engine(p.client).atomicsCompleted());
            assertFalse(p.client.isDisposed());
        }
    }

    @Test
    void aWordPastTheEndIsRefusedNamingTheLimit() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 64);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.ATOMIC)[1];
            RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, awaitError(p, p.client.compareAndSwap(user, 64, 0, 1)));
            assertEquals(RemoteAccessException.Reason.BOUNDS, e.reason());
            assertTrue(e.getMessage().contains("offsetBytes + 8 <= 64"), e.getMessage());
        }
    }

    @Test
    void readOnlyAndWriteOnlyExposuresRefuseAtomicsNamingTheRightToGrant() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion readOnly = region(p.serverNode, 64);
            MemoryRegion writeOnly = region(p.serverNode, 64);
            setWord(readOnly, 0, 5);
            RemoteRegion r = exposeToClient(p, readOnly, RemoteAccess.READ)[1];
            RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, awaitError(p, p.client.fetchAndAdd(r, 0, 1)));
            assertEquals(RemoteAccessException.Reason.RIGHTS, e.reason());
            assertTrue(e.getMessage().contains("READ only") && e.getMessage().contains("RemoteAccess.READ_ATOMIC"), e.getMessage());
            List<RemoteRegion> seen = new ArrayList<>();
            p.client.remoteRegions().subscribe(seen::add);
            await(p, p.server.expose(writeOnly, RemoteAccess.WRITE));
            p.runUntil(() -> seen.size() == 2);
            RemoteAccessException w = assertInstanceOf(RemoteAccessException.class,
                awaitError(p, p.client.compareAndSwap(seen.get(1), 0, 0, 1)));
            assertTrue(w.getMessage().contains("WRITE only") && w.getMessage().contains("RemoteAccess.WRITE_ATOMIC"), w.getMessage());
            assertEquals(5, word(readOnly, 0));
        }
    }

    @Test
    void afterTheOwnerRevokesAtomicsAreRefused() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 64);
            RemoteRegion[] r = exposeToClient(p, target, RemoteAccess.ATOMIC);
            await(p, r[0].revoke());
            RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, awaitError(p, p.client.fetchAndAdd(r[1], 0, 1)));
            assertEquals(RemoteAccessException.Reason.REVOKED, e.reason());
            assertTrue(e.getMessage().contains("revoked"), e.getMessage());
            assertEquals(0, word(target, 0));
        }
    }

    @Test
    void aPeerSkippingTheChecksMeetsTheOwnersNicAndTheWordIsUntouched() {
        try (InvokerPair p = pair(1)) {
            MemoryRegion target = region(p.serverNode, 64);
            setWord(target, 0, 11);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.READ_WRITE)[1];
            RemoteRegion forged = UncheckedOperations.forge(engine(p.client), user, 64, RemoteAccess.READ_WRITE_ATOMIC);
            Throwable e = awaitError(p, p.client.fetchAndAdd(forged, 0, 1));
            assertTrue(e instanceof RdmaTransportException || e instanceof ConnectionClosedException, e.toString());
            p.drive();
            assertEquals(11, word(target, 0), "the registration has no REMOTE_ATOMIC: the owner's NIC refused (REM_ACCESS_ERR)");
        }
    }

    @Test
    void anAtomicWhoseRailDiesFailsAndIsNotPostedAgain() {
        try (InvokerPair p = InvokerPair.open(2, ConnectionSpec.rails(2), b -> b.qpRetryTimeoutNs(1_000_000))) {
            MemoryRegion target = region(p.serverNode, 64);
            RemoteRegion user = exposeToClient(p, target, RemoteAccess.ATOMIC)[1];
            AtomicInteger ok = new AtomicInteger();
            List<Throwable> failed = new ArrayList<>();
            AtomicInteger ended = new AtomicInteger();
            for (int i = 0; i < 8; i++) {
                p.client.fetchAndAdd(user, 0, 1).subscribe(v -> ok.incrementAndGet(), e -> {
                    failed.add(e);
                    ended.incrementAndGet();
                }, ended::incrementAndGet);
            }
            p.pass();
            assertTrue(engine(p.client).atomicsInFlight() > 0, "atomics are in flight when the rail dies");
            ((SoftPort) p.soft.b().devices().get(0).port(1)).setState(PortState.DOWN);
            p.runUntil(() -> ended.get() == 8);
            assertFalse(failed.isEmpty(), "the atomics of the dead rail failed");
            for (Throwable e : failed) {
                assertTrue(e.getMessage().contains("not posted again"), e.getMessage());
            }
            long w = word(target, 0);
            assertTrue(w >= ok.get() && w <= 8, "each atomic ran at most once: word " + w + ", " + ok.get() + " succeeded");
            assertFalse(p.client.isDisposed(), "the connection lives on the other rail");
            assertEquals(w, (long) await(p, p.client.fetchAndAdd(user, 0, 1)), "atomics go on over the survivor");
        }
    }

    @Test
    void aProviderWithoutAtomicsRefusesThemOnBothSidesNamingTheCapability() {
        try (InvokerPeers p = new InvokerPeers(b -> { }, pb -> pb.capabilities(SoftDevice.CAPABILITIES.withAtomics(false)))) {
            RdmaConnection[] c = p.connect(ConnectionSpec.defaults());
            MemoryRegion target = p.serverNode.registerMemory(java.nio.ByteBuffer.allocateDirect(64));
            UnsupportedCapabilityException owner = assertInstanceOf(UnsupportedCapabilityException.class,
                peerError(p, c[1].expose(target, RemoteAccess.ATOMIC)));
            assertEquals("atomics", owner.capability());
            assertEquals(RdmaException.Category.UNSUPPORTED, owner.category());
            assertTrue(owner.getMessage().contains("expose it without ATOMIC"), owner.getMessage());
            List<RemoteRegion> seen = new ArrayList<>();
            c[0].remoteRegions().subscribe(seen::add);
            peerOk(p, c[1].expose(target, RemoteAccess.READ_WRITE));
            p.runUntil(() -> !seen.isEmpty());
            UnsupportedCapabilityException user = assertInstanceOf(UnsupportedCapabilityException.class,
                peerError(p, c[0].fetchAndAdd(seen.get(0), 0, 1)));
            assertTrue(user.getMessage().contains("has no atomics") && user.getMessage().contains("'soft'"), user.getMessage());
        }
    }

    private static Throwable peerError(InvokerPeers p, Mono<?> mono) {
        java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
        mono.subscribe(v -> { }, error::set);
        p.runUntil(() -> error.get() != null);
        return error.get();
    }

    private static void peerOk(InvokerPeers p, Mono<?> mono) {
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        mono.subscribe(v -> done.set(true), e -> {
            throw new AssertionError(e);
        }, () -> done.set(true));
        p.runUntil(done::get);
    }
}
