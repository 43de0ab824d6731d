package io.rdmaflux.core.internal.regcache;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pin-down registration cache alone: containment lookup, LRU by bytes, pins, invalidation, close. */
class RegistrationCacheTest {
    private RdmaProvider provider;
    private ProtectionDomain pd;

    @BeforeEach
    void open() {
        provider = SoftProvider.builder().threadingMode(ThreadingMode.INVOKER).build();
        pd = provider.devices().get(0).allocateProtectionDomain();
    }

    @AfterEach
    void close() {
        pd.close();
        provider.close();
    }

    private static long addr(ByteBuffer b) {
        return BufferUtil.address(b);
    }

    /** [budget, registered, user, entries, pinned, hits, misses, evictions, waits, bypasses, invalidations] */
    private static void assertCounters(RegistrationCache c, long registered, long entries, long pinned, long hits, long misses,
                                       long evictions, long waits) {
        long[] k = c.counters();
        assertEquals(registered, k[1], "registered bytes");
        assertEquals(entries, k[3], "entries");
        assertEquals(pinned, k[4], "pinned");
        assertEquals(hits, k[5], "hits");
        assertEquals(misses, k[6], "misses");
        assertEquals(evictions, k[7], "evictions");
        assertEquals(waits, k[8], "waits");
    }

    @Test
    void aMissRegistersTheWholeBufferAndSlicesOfItHit() {
        try (RegistrationCache c = new RegistrationCache(pd, 1 << 20, Access.REMOTE_READ)) {
            ByteBuffer b = ByteBuffer.allocateDirect(64 * 1024);
            CacheEntry first = c.acquire(b, addr(b) + 4096, 8192);
            assertEquals(64 * 1024, first.region().length(), "the whole buffer is registered");
            assertTrue((first.region().access() & Access.REMOTE_READ) != 0, "readable by the READ rendezvous");
            ByteBuffer slice = b.slice(32 * 1024, 16 * 1024);
            CacheEntry second = c.acquire(slice, addr(slice), 16 * 1024);
            assertSame(first, second, "a slice of a registered buffer hits by containment");
            assertCounters(c, 64 * 1024, 1, 1, 1, 1, 0, 0);
            c.release(first);
            c.release(second);
            assertCounters(c, 64 * 1024, 1, 0, 1, 1, 0, 0);
            assertThrows(IllegalStateException.class, () -> c.release(first), "a release without a pin is caught");
        }
    }

    @Test
    void leastRecentlyUsedUnpinnedEntriesAreEvictedByBytes() {
        try (RegistrationCache c = new RegistrationCache(pd, 3 * 4096, Access.REMOTE_READ)) {
            ByteBuffer a = ByteBuffer.allocateDirect(4096);
            ByteBuffer b = ByteBuffer.allocateDirect(4096);
            ByteBuffer d = ByteBuffer.allocateDirect(4096);
            ByteBuffer e = ByteBuffer.allocateDirect(8192);
            CacheEntry ea = c.acquire(a, addr(a), 4096);
            CacheEntry eb = c.acquire(b, addr(b), 4096);
            CacheEntry ed = c.acquire(d, addr(d), 4096);
            c.release(ea);
            c.release(eb);
            c.release(ed);
            c.release(c.acquire(a, addr(a), 4096)); // a is now the most recently used: b, then d go first
            CacheEntry ee = c.acquire(e, addr(e), 8192);
            assertNotSame(RegistrationCache.WAIT, ee);
            assertFalse(eb.region().isValid(), "b, least recently used, was deregistered");
            assertFalse(ed.region().isValid(), "then d");
            assertTrue(ea.region().isValid(), "a was used last and stays");
            assertCounters(c, 4096 + 8192, 2, 1, 1, 4, 2, 0);
            c.release(ee);
        }
    }

    @Test
    void evictionSkipsPinnedEntriesAndTheNewRegistrationWaitsUntilOneIsUnpinned() {
        try (RegistrationCache c = new RegistrationCache(pd, 2 * 4096, Access.REMOTE_READ)) {
            ByteBuffer a = ByteBuffer.allocateDirect(4096);
            ByteBuffer b = ByteBuffer.allocateDirect(4096);
            ByteBuffer d = ByteBuffer.allocateDirect(4096);
            CacheEntry ea = c.acquire(a, addr(a), 4096);
            CacheEntry eb = c.acquire(b, addr(b), 4096);
            assertSame(RegistrationCache.WAIT, c.acquire(d, addr(d), 4096), "both entries are pinned: no room, wait");
            assertTrue(ea.region().isValid() && eb.region().isValid(), "a pinned entry is never deregistered");
            c.release(eb);
            CacheEntry ed = c.acquire(d, addr(d), 4096);
            assertNotSame(RegistrationCache.WAIT, ed);
            assertFalse(eb.region().isValid(), "the unpinned one made room");
            assertTrue(ea.region().isValid(), "the pinned one stays");
            assertCounters(c, 2 * 4096, 2, 2, 0, 3, 1, 1);
            c.release(ea);
            c.release(ed);
        }
    }

    @Test
    void aMessageLargerThanTheBudgetOrAZeroBudgetBypassesTheCache() {
        try (RegistrationCache off = new RegistrationCache(pd, 0, Access.REMOTE_READ);
             RegistrationCache small = new RegistrationCache(pd, 4096, Access.REMOTE_READ)) {
            ByteBuffer b = ByteBuffer.allocateDirect(16 * 1024);
            assertSame(RegistrationCache.BYPASS, off.acquire(b, addr(b), 1024));
            assertSame(RegistrationCache.BYPASS, small.acquire(b, addr(b), 8192));
            CacheEntry part = small.acquire(b, addr(b) + 1024, 2048);
            assertEquals(2048, part.region().length(), "a buffer above the budget: only the message is registered");
            small.release(part);
            assertEquals(1, off.counters()[9]);
            assertEquals(1, small.counters()[9]);
            ByteBuffer readOnly = ByteBuffer.allocateDirect(1024).asReadOnlyBuffer();
            assertSame(RegistrationCache.BYPASS, small.acquire(readOnly, addr(readOnly), 1024), "a read-only buffer is staged");
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RegistrationCache(pd, -1, 0));
        assertTrue(e.getMessage().contains("-1") && e.getMessage().contains("0 turns the cache off"), e.getMessage());
    }

    @Test
    void heapBuffersAreRefusedWithTheFix() {
        try (RegistrationCache c = new RegistrationCache(pd, 1 << 20, Access.REMOTE_READ)) {
            ByteBuffer heap = ByteBuffer.allocate(4096);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.acquire(heap, 0, 16));
            assertTrue(e.getMessage().contains("allocateDirect"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> c.invalidate(heap));
            assertThrows(IllegalArgumentException.class, () -> c.registerUser(heap, Access.LOCAL_WRITE));
        }
    }

    @Test
    void invalidationDropsTheBufferAtOnceOrAtTheLastUnpin() {
        try (RegistrationCache c = new RegistrationCache(pd, 1 << 20, Access.REMOTE_READ)) {
            ByteBuffer a = ByteBuffer.allocateDirect(4096);
            ByteBuffer b = ByteBuffer.allocateDirect(4096);
            c.release(c.acquire(a, addr(a), 4096));
            CacheEntry eb = c.acquire(b, addr(b), 4096);
            assertEquals(1, c.invalidate(a));
            assertEquals(1, c.invalidate(b));
            assertTrue(eb.region().isValid(), "pinned by a send in flight: still registered");
            assertEquals(0, c.counters()[3], "both left the lookup");
            CacheEntry again = c.acquire(b, addr(b), 4096);
            assertNotSame(eb, again, "a new registration, not the invalidated one");
            c.release(eb);
            assertFalse(eb.region().isValid(), "deregistered at its last unpin");
            assertEquals(4096, c.counters()[1], "only the new registration is counted");
            c.release(again);
            assertEquals(2, c.counters()[10], "invalidations");
        }
    }

    @Test
    void aUserRegionIsFoundByItsSlicesAndItsDeregistrationWaitsForTheSendsPinningIt() {
        try (RegistrationCache c = new RegistrationCache(pd, 4096, Access.REMOTE_READ)) {
            ByteBuffer b = ByteBuffer.allocateDirect(64 * 1024);
            UserRegion r = c.registerUser(b, Access.LOCAL_WRITE | Access.REMOTE_READ);
            CacheEntry hit = c.acquire(b, addr(b) + 100, 50_000);
            assertSame(r.entry(), hit, "a user region hits, outside the budget (which is smaller than it)");
            assertTrue(c.pinUser(r));
            MemoryRegion inner = r.entry().region();
            r.deregister();
            assertFalse(r.isValid(), "invalid for new sends at once");
            assertFalse(c.pinUser(r), "no new send pins it");
            assertTrue(inner.isValid(), "two sends in flight pin it: still registered");
            c.release(hit);
            assertTrue(inner.isValid());
            c.release(r.entry());
            assertFalse(inner.isValid(), "deregistered once the last send completed");
            assertEquals(0, c.counters()[2], "user bytes");
        }
    }

    @Test
    void closeDeregistersEveryEntryPinnedOrNotAndDropsTheBuffers() {
        RegistrationCache c = new RegistrationCache(pd, 1 << 20, Access.REMOTE_READ);
        ByteBuffer a = ByteBuffer.allocateDirect(4096);
        ByteBuffer b = ByteBuffer.allocateDirect(4096);
        CacheEntry pinned = c.acquire(a, addr(a), 4096);
        CacheEntry idle = c.acquire(b, addr(b), 4096);
        c.release(idle);
        c.invalidate(a); // retired but pinned: must still be freed at close
        c.close();
        assertFalse(pinned.region().isValid());
        assertFalse(idle.region().isValid());
        assertEquals(0, c.counters()[1], "no bytes registered");
        assertEquals(null, pinned.keepAlive, "no buffer kept reachable");
        assertSame(RegistrationCache.BYPASS, c.acquire(a, addr(a), 4096), "a closed cache registers nothing");
        c.release(pinned); // a send torn down after close: ignored
    }
}
