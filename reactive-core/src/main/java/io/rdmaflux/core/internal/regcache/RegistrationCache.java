package io.rdmaflux.core.internal.regcache;

import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.VerbsException;
import org.agrona.BufferUtil;
import org.jspecify.annotations.Nullable;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A bounded pin-down registration cache (seed 001 &sect;3.1: "the buffer pinning and unpinning overhead
 * can be reduced by using the pin-down cache technique"; seed 000 &sect;5.1 and seed 002 &sect;3.2: the
 * cost of registering a message buffer with the HCA "can be largely avoided by using a registration
 * cache"). A node has one; it registers application memory sent by reference (a direct
 * {@link ByteBuffer} message above the rendezvous threshold) the first time it is sent and keeps the
 * registration for the next sends from the same memory, so a large message goes from the
 * application's buffer with no staging copy. A node's rails are ports of one device, so one
 * registration (one lkey and rkey) serves every rail.
 *
 * <p><b>Lookup:</b> by address range with containment: a message {@code [a, a + len)} hits the entry
 * with the greatest start address {@code <= a} if that entry contains the whole range (one further
 * below that contains it too is not searched: overlapping registrations of different starts cost one
 * extra registration, never a wrong key). On a miss the
 * cache registers the whole buffer ({@code [address of index 0, + capacity)}), so later messages from
 * other slices of it hit, unless the capacity exceeds the budget, when it registers just the message.
 * Regions the application registered itself ({@link #registerUser}) are in the same lookup, outside
 * the budget and never evicted.
 *
 * <p><b>Budget and eviction:</b> LRU by registered bytes. When a new registration would take the
 * registered bytes over {@code budgetBytes}, least recently used entries are deregistered until it fits;
 * an entry pinned by a send in flight is skipped, never deregistered. If the pinned ones alone leave
 * no room, {@link #acquire} answers {@link #WAIT}: the send tries again once a send in flight
 * completed and unpinned its entry. A message longer than the whole budget, or a cache with budget 0,
 * answers {@link #BYPASS}: the caller stages a copy; so does a read-only buffer, and a registration the
 * device refuses.
 *
 * <p><b>The stale-address hazard, and how it is avoided.</b> A cache keyed by address cannot know
 * that the application freed a buffer and the allocator handed the same addresses to a new one (the
 * classic pin-down cache bug: the old registration then maps pages the new buffer does not own, or a
 * hit sends from a region whose pages were remapped). Here every cached entry holds a strong reference
 * to the {@link ByteBuffer} it registered: a direct buffer's memory is freed only by its cleaner once
 * the buffer is unreachable, so memory in the cache cannot be freed and its addresses cannot be reused
 * while it is cached, and an address hit always means the same live memory. The cost: a buffer the
 * application dropped stays allocated until it is evicted, invalidated ({@link #invalidate}), or the
 * node closes. An application that frees direct memory by hand (e.g. {@code Unsafe.invokeCleaner})
 * must call {@link #invalidate} first, as an MPI program must with its pin-down cache.
 *
 * <p><b>Concurrency:</b> thread-safe; every method takes the cache's monitor (the send path takes it
 * once per large message, an uncontended lock next to a 1 MiB transfer). <b>Lifecycle:</b>
 * {@link #close()} deregisters every entry, pinned or not (the node closes its connections, and with
 * them every send, first) and drops every buffer reference.
 */
public final class RegistrationCache implements AutoCloseable {
    /** {@link #acquire}: pinned entries leave no room now; try again after a send in flight completed. */
    public static final CacheEntry WAIT = new CacheEntry("WAIT");
    /** Who got {@link #WAIT}: run once at the next unpin (under the lock). */
    private final java.util.Set<Runnable> waiters = new java.util.LinkedHashSet<>();
    /** {@link #acquire}: the cache is off or the message is longer than the budget; stage a copy. */
    public static final CacheEntry BYPASS = new CacheEntry("BYPASS");

    private final ProtectionDomain pd;
    private final long budgetBytes;
    private final int access;
    private final TreeMap<Long, CacheEntry> byAddress = new TreeMap<>();
    /** Every entry whose region is registered: in the lookup, or retired and waiting for its last unpin. */
    private final Set<CacheEntry> registered = Collections.newSetFromMap(new IdentityHashMap<>());
    /** LRU list of the budgeted (non-user) entries in the lookup: head = least recently used. */
    private @Nullable CacheEntry lruHead;
    private @Nullable CacheEntry lruTail;
    /** Bytes of budgeted entries still registered (in the lookup, or retired and pinned). */
    private long registeredBytes;
    private long userBytes;
    private int entries;
    private int pinned;
    private long hits;
    private long misses;
    private long evictions;
    private long waits;
    private long bypasses;
    private long invalidations;
    private boolean closed;

    /**
     * @param pd          where regions are registered (the node's protection domain)
     * @param budgetBytes most bytes the cache keeps registered, &gt;= 0; 0 turns it off
     * @param access      {@link io.rdmaflux.verbs.Access} flags of the cache's registrations
     * @throws IllegalArgumentException if {@code budgetBytes} is negative
     */
    public RegistrationCache(ProtectionDomain pd, long budgetBytes, int access) {
        if (budgetBytes < 0) {
            throw new IllegalArgumentException("registration cache budget >= 0 bytes required but it was " + budgetBytes
                + "; 0 turns the cache off (large direct-buffer messages are then copied into a staging buffer)");
        }
        this.pd = pd;
        this.budgetBytes = budgetBytes;
        this.access = access;
    }

    public long budgetBytes() {
        return budgetBytes;
    }

    /**
     * Pins a registration covering {@code [address, address + lengthBytes)}, which lies in
     * {@code buffer}'s memory: a hit, or a miss that registers the buffer now (evicting LRU entries).
     *
     * @return the entry, pinned (hand it to {@link #release} once the NIC is done with the memory), or
     *     {@link #WAIT} or {@link #BYPASS}
     * @throws IllegalArgumentException if {@code buffer} is not direct
     */
    public synchronized CacheEntry acquire(ByteBuffer buffer, long address, int lengthBytes) {
        return acquire(buffer, address, lengthBytes, null);
    }

    /**
     * As {@link #acquire(ByteBuffer, long, int)}; when it answers {@link #WAIT}, {@code onRoom} is run (once,
     * on the thread that unpins) when a pin is next given back. The cache is the node's, shared by its
     * connections, and an idle connection is visited again only when signalled. Give the same instance
     * each time: a waiter is kept once.
     */
    public synchronized CacheEntry acquire(ByteBuffer buffer, long address, int lengthBytes, @Nullable Runnable onRoom) {
        CacheEntry e = acquireEntry(buffer, address, lengthBytes);
        if (e == WAIT && onRoom != null) {
            waiters.add(onRoom);
        }
        return e;
    }

    private CacheEntry acquireEntry(ByteBuffer buffer, long address, int lengthBytes) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("the registration cache needs a direct ByteBuffer (ByteBuffer.allocateDirect), not "
                + buffer + ": the GC moves heap buffers, so they cannot stay registered");
        }
        if (closed) {
            return BYPASS;
        }
        CacheEntry e = lookup(address, lengthBytes);
        if (e != null) {
            hits++;
            pin(e);
            touch(e);
            return e;
        }
        return register(buffer, address, lengthBytes);
    }

    /** The live entry with the greatest start at or below {@code address} that contains the range, or null. */
    private @Nullable CacheEntry lookup(long address, long lengthBytes) {
        Map.Entry<Long, CacheEntry> floor = byAddress.floorEntry(address);
        if (floor != null && floor.getValue().contains(address, lengthBytes)) {
            return floor.getValue();
        }
        return null;
    }

    private CacheEntry register(ByteBuffer buffer, long address, int lengthBytes) {
        long base = BufferUtil.address(buffer);
        ByteBuffer whole = buffer.duplicate().clear();
        long length = buffer.capacity();
        if (length > budgetBytes) {
            // the buffer is larger than the budget: register just the message
            whole = whole.position((int) (address - base)).limit((int) (address - base) + lengthBytes);
            base = address;
            length = lengthBytes;
        }
        if (length > budgetBytes || lengthBytes == 0 || buffer.isReadOnly()) {
            // a read-only buffer: verbs registers memory the NIC may write (LOCAL_WRITE implied by some HCAs)
            bypasses++;
            return BYPASS;
        }
        if (!makeRoom(length)) {
            waits++;
            return WAIT;
        }
        MemoryRegion region;
        try {
            region = pd.registerMemory(whole, access);
        } catch (VerbsException refused) {
            // the device refuses (out of resources, limits): the send is staged by a copy instead
            bypasses++;
            return BYPASS;
        }
        misses++;
        CacheEntry e = new CacheEntry(base, length, region, buffer, false);
        CacheEntry same = byAddress.put(base, e);
        if (same != null) {
            // a shorter registration from the same address: it leaves the lookup (deregistered once unpinned)
            retire(same);
        }
        entries++;
        registered.add(e);
        registeredBytes += length;
        append(e);
        pin(e);
        return e;
    }

    /** Evicts unpinned LRU entries until {@code length} more bytes fit. @return false if pinned entries leave no room */
    private boolean makeRoom(long length) {
        CacheEntry e = lruHead;
        while (registeredBytes + length > budgetBytes && e != null) {
            CacheEntry next = e.next;
            if (e.pins == 0) {
                evictions++;
                byAddress.remove(e.address, e);
                retire(e);
            }
            e = next;
        }
        return registeredBytes + length <= budgetBytes;
    }

    /**
     * Registers memory the application owns ({@code RdmaNode.registerMemory}): its region is in the
     * lookup (messages of any slice of it hit) but outside the budget and never evicted.
     *
     * @return the region; its {@code deregister()} invalidates the entry and deregisters once no send
     *     in flight pins it
     * @throws IllegalArgumentException if the buffer is not direct
     * @throws IllegalStateException if the cache is closed
     */
    public synchronized UserRegion registerUser(ByteBuffer buffer, int userAccess) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("registerMemory needs a direct ByteBuffer (ByteBuffer.allocateDirect); the GC moves heap buffers");
        }
        if (closed) {
            throw new IllegalStateException("the node's registration cache is closed");
        }
        MemoryRegion region = pd.registerMemory(buffer, userAccess);
        // the application owns the buffer and keeps it: the entry holds no reference to it
        CacheEntry e = new CacheEntry(region.address(), region.length(), region, null, true);
        CacheEntry same = byAddress.put(e.address, e);
        if (same != null) {
            retire(same);
        }
        entries++;
        registered.add(e);
        userBytes += e.lengthBytes;
        return new UserRegion(this, e);
    }

    /** Pins a region the application registered, for a send from it. @return false if it was deregistered */
    public synchronized boolean pinUser(UserRegion region) {
        CacheEntry e = region.entry();
        if (e.retired || closed) {
            return false;
        }
        hits++;
        pin(e);
        return true;
    }

    /** A send is done with {@code e} (the NIC no longer touches its memory): one pin fewer. Any thread. */
    public synchronized void release(CacheEntry e) {
        if (closed) {
            return;
        }
        if (e.pins <= 0) {
            throw new IllegalStateException("release of " + e + " which no send pins");
        }
        if (--e.pins == 0) {
            pinned--;
            if (e.retired) {
                deregister(e);
            }
            if (!waiters.isEmpty()) {
                // cheap and non-blocking (a connection's wake-up): run under the lock
                for (Runnable w : waiters) {
                    w.run();
                }
                waiters.clear();
            }
        }
    }

    /**
     * Drops the registrations of every cache entry overlapping {@code buffer}'s memory
     * {@code [address of index 0, + capacity)} and the cache's references to the buffer, so the
     * application can free it. An entry a send in flight pins is deregistered when the send completes.
     *
     * @return the entries invalidated
     * @throws IllegalArgumentException if {@code buffer} is not direct
     */
    public synchronized int invalidate(ByteBuffer buffer) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("invalidateRegistrations needs the direct ByteBuffer that was sent, not " + buffer
                + ": heap buffers are never registered, so there is nothing to invalidate");
        }
        long start = BufferUtil.address(buffer);
        long end = start + buffer.capacity();
        List<CacheEntry> hit = new ArrayList<>();
        for (CacheEntry e : byAddress.values()) {
            if (!e.user && e.address < end && start < e.address + e.lengthBytes) {
                hit.add(e);
            }
        }
        for (CacheEntry e : hit) {
            byAddress.remove(e.address, e);
            retire(e);
            invalidations++;
        }
        return hit.size();
    }

    /** The application deregistered its region: out of the lookup now, deregistered at once or at the last unpin. */
    synchronized void invalidateUser(CacheEntry e) {
        if (e.retired) {
            return;
        }
        byAddress.remove(e.address, e);
        invalidations++;
        retire(e);
    }

    synchronized boolean isLive(CacheEntry e) {
        return !e.retired && !closed;
    }

    private void pin(CacheEntry e) {
        if (e.pins++ == 0) {
            pinned++;
        }
    }

    /** Takes {@code e} out of the lookup and the LRU list; deregisters it now unless a send pins it. */
    private void retire(CacheEntry e) {
        if (e.retired) {
            return;
        }
        e.retired = true;
        entries--;
        if (!e.user) {
            unlink(e);
        }
        if (e.pins == 0) {
            deregister(e);
        }
    }

    private void deregister(CacheEntry e) {
        if (!registered.remove(e)) {
            return;
        }
        if (e.user) {
            userBytes -= e.lengthBytes;
        } else {
            registeredBytes -= e.lengthBytes;
        }
        e.keepAlive = null;
        e.region().deregister();
    }

    private void touch(CacheEntry e) {
        if (!e.user && e != lruTail) {
            unlink(e);
            append(e);
        }
    }

    private void append(CacheEntry e) {
        e.prev = lruTail;
        e.next = null;
        if (lruTail != null) {
            lruTail.next = e;
        } else {
            lruHead = e;
        }
        lruTail = e;
    }

    private void unlink(CacheEntry e) {
        if (e.prev != null) {
            e.prev.next = e.next;
        } else if (lruHead == e) {
            lruHead = e.next;
        }
        if (e.next != null) {
            e.next.prev = e.prev;
        } else if (lruTail == e) {
            lruTail = e.prev;
        }
        e.prev = null;
        e.next = null;
    }

    /** Counters now: budget, bytes and entries registered, pinned entries, hits, misses, evictions, waits, bypasses, invalidations. */
    public synchronized long[] counters() {
        return new long[] {budgetBytes, registeredBytes, userBytes, entries, pinned, hits, misses, evictions, waits, bypasses, invalidations};
    }

    /** Deregisters every entry, pinned or not, and drops every buffer reference; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (CacheEntry e : List.copyOf(registered)) {
            retire(e);
            // pinned ones too: the node closed its connections first, no NIC operation reads the memory any more
            e.pins = 0;
            deregister(e);
        }
        byAddress.clear();
        pinned = 0;
        lruHead = null;
        lruTail = null;
    }
}
