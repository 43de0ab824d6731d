package io.rdmaflux.core.internal.regcache;

import io.rdmaflux.verbs.MemoryRegion;
import org.jspecify.annotations.Nullable;

import java.nio.ByteBuffer;

/**
 * One registration of a {@link RegistrationCache}: the registered range {@code [address, address +
 * lengthBytes)}, its memory region, the buffer kept reachable while it is registered, and the pins of
 * the sends in flight from it. A send holds a pin from the moment it takes the entry until the NIC can
 * no longer touch the memory (its last RDMA WRITE completed, or the peer's READ_FIN arrived); an entry
 * with a pin is never deregistered, neither by eviction nor by invalidation (those wait for the last
 * unpin).
 *
 * <p><b>Concurrency:</b> every field is guarded by the owning cache's monitor; the getters the hot path
 * reads ({@link #lkey()}, {@link #rkey()}) are final values.
 */
public final class CacheEntry {
    final long address;
    final long lengthBytes;
    private final @Nullable MemoryRegion region;
    private final @Nullable String sentinel;
    private final int lkey;
    private final int rkey;
    /** Keeps the memory from being freed (a direct buffer's cleaner runs only once it is unreachable). */
    @Nullable ByteBuffer keepAlive;
    /** Registered by the application ({@code RdmaNode.registerMemory}): outside the budget, never evicted. */
    final boolean user;
    int pins;
    /** Out of the lookup (evicted or invalidated): deregistered at the last unpin. */
    boolean retired;
    @Nullable CacheEntry prev;
    @Nullable CacheEntry next;

    CacheEntry(long address, long lengthBytes, MemoryRegion region, @Nullable ByteBuffer keepAlive, boolean user) {
        this.address = address;
        this.lengthBytes = lengthBytes;
        this.region = region;
        this.sentinel = null;
        this.lkey = region.lkey();
        this.rkey = region.rkey();
        this.keepAlive = keepAlive;
        this.user = user;
    }

    /** One of the cache's answer markers ({@link RegistrationCache#WAIT}, {@link RegistrationCache#BYPASS}). */
    CacheEntry(String sentinel) {
        this.address = 0;
        this.lengthBytes = 0;
        this.region = null;
        this.sentinel = sentinel;
        this.lkey = 0;
        this.rkey = 0;
        this.user = false;
        this.retired = true;
    }

    /** Whether {@code [a, a + len)} lies inside this entry's range. */
    boolean contains(long a, long len) {
        return a >= address && a + len <= address + lengthBytes;
    }

    /** Local key of the registration, for the send's scatter/gather entries. */
    public int lkey() {
        return lkey;
    }

    /** Remote key of the registration, for the peer's RDMA READ (the READ rendezvous). */
    public int rkey() {
        return rkey;
    }

    /** The memory region (tests and leak reports). */
    public MemoryRegion region() {
        MemoryRegion r = region;
        if (r == null) {
            throw new IllegalStateException(sentinel + " is an answer of the cache, not an entry");
        }
        return r;
    }

    @Override
    public String toString() {
        if (sentinel != null) {
            return sentinel;
        }
        return "CacheEntry{[0x" + Long.toHexString(address) + ", +" + lengthBytes + "), " + (user ? "user" : "cached")
            + ", pins=" + pins + (retired ? ", retired" : "") + "}";
    }
}
