package io.rdmaflux.core.internal.buffer;

import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A pool of fixed-size slots carved from one registered memory region: the pre-pinned buffer pool
 * of seed 001 &sect;3.1 (no registration per message). Slot {@code i} covers
 * {@code [i * slotBytes, (i + 1) * slotBytes)} of the region.
 *
 * <p>Acquire and release are O(1) on an index stack and allocate nothing. A release of a slot that
 * is not acquired throws, so double frees are caught where they happen; {@link #inUse()} is what a
 * leak check asserts to be 0.
 *
 * <p><b>Shares:</b> a pool made by {@link #share} owns no memory: its slot {@code i} is mapped, while
 * acquired, to a slot of a node-wide {@link SharedSlotRegion} (taken on {@link #acquire()}, given back on
 * {@link #release(int)}, except {@code keep} slots that stay mapped so that control frames always find
 * one). Offsets and addresses are then those of the region; {@link #memory()} is the region's memory.
 *
 * <p><b>Concurrency:</b> not thread-safe; one progress thread owns a pool. <b>Lifecycle:</b>
 * {@link #close()} deregisters the region, or gives a share's slots back (idempotent).
 */
public final class SlotPool implements AutoCloseable {
    private final String name;
    private final MemoryRegion region;
    private final UnsafeBuffer memory;
    private final int slotBytes;
    private final int slotCount;
    private final int[] free;
    private final boolean[] acquired;
    private int freeCount;
    /** Set for a share: the region its slots come from, and per local slot the region's slot (-1: unmapped). */
    private final SharedSlotRegion parent;
    /** A share's hint for when the region has a slot again; null when none was given. */
    private volatile @org.jspecify.annotations.Nullable Runnable onRoom;
    private final int[] global;
    private final int keep;
    private int mapped;
    private boolean closed;

    /**
     * Allocates and registers {@code slotCount * slotBytes} bytes in {@code pd}.
     *
     * @throws IllegalArgumentException if a size is not positive or the product exceeds 2 GiB
     */
    public SlotPool(String name, ProtectionDomain pd, int slotBytes, int slotCount, int access) {
        if (slotBytes <= 0) {
            throw new IllegalArgumentException("slotBytes > 0 required but it was " + slotBytes);
        }
        if (slotCount <= 0) {
            throw new IllegalArgumentException("slotCount > 0 required but it was " + slotCount);
        }
        long total = (long) slotBytes * slotCount;
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("pool '" + name + "' of " + slotCount + " x " + slotBytes + " bytes = " + total
                + " bytes exceeds 2 GiB; use fewer or smaller buffers");
        }
        this.name = name;
        this.slotBytes = slotBytes;
        this.slotCount = slotCount;
        this.region = pd.allocateMemory(total, access);
        this.memory = new UnsafeBuffer(region.address(), (int) total);
        this.free = new int[slotCount];
        this.acquired = new boolean[slotCount];
        for (int i = 0; i < slotCount; i++) {
            free[i] = slotCount - 1 - i;
        }
        this.freeCount = slotCount;
        this.parent = null;
        this.global = null;
        this.keep = 0;
    }

    private SlotPool(String name, SharedSlotRegion parent, int slotCount, int keep) {
        if (slotCount <= 0) {
            throw new IllegalArgumentException("slotCount > 0 required but it was " + slotCount);
        }
        if (keep < 0 || keep > slotCount) {
            throw new IllegalArgumentException("keep in [0, " + slotCount + "] required but it was " + keep);
        }
        this.name = name;
        this.parent = parent;
        this.region = parent.region();
        this.memory = parent.memory();
        this.slotBytes = parent.slotBytes();
        this.slotCount = slotCount;
        this.keep = keep;
        this.free = new int[slotCount];
        this.acquired = new boolean[slotCount];
        this.global = new int[slotCount];
        java.util.Arrays.fill(global, -1);
        for (int i = 0; i < slotCount; i++) {
            free[i] = slotCount - 1 - i;
        }
        this.freeCount = slotCount;
    }

    /**
     * A pool of at most {@code slotCount} slots drawn from {@code parent} while acquired; {@code keep} of
     * them stay mapped once taken (so a channel's control frame never waits on other connections).
     *
     * @throws IllegalArgumentException if {@code slotCount <= 0} or {@code keep} is not in [0, slotCount]
     */
    public static SlotPool share(String name, SharedSlotRegion parent, int slotCount, int keep) {
        return new SlotPool(name, parent, slotCount, keep);
    }

    /** Whether this pool draws its slots from a {@link SharedSlotRegion}. */
    public boolean isShare() {
        return parent != null;
    }

    /** @return a free slot index, or -1 when all are in use */
    public int acquire() {
        if (freeCount == 0) {
            return -1;
        }
        int slot = free[freeCount - 1];
        if (parent != null && global[slot] < 0) {
            int g = closed ? -1 : parent.acquire();
            if (g < 0) {
                return -1;
            }
            global[slot] = g;
            mapped++;
        }
        freeCount--;
        acquired[slot] = true;
        return slot;
    }

    /**
     * Returns {@code slot} to the pool.
     *
     * @throws IllegalStateException if the slot is not acquired (a double free)
     */
    public void release(int slot) {
        if (closed) {
            return;
        }
        if (slot < 0 || slot >= slotCount || !acquired[slot]) {
            throw new IllegalStateException("slot " + slot + " of pool '" + name + "' released but it is not in use (double free)");
        }
        acquired[slot] = false;
        free[freeCount++] = slot;
        if (parent != null && mapped > keep) {
            parent.release(global[slot]);
            global[slot] = -1;
            mapped--;
        }
    }

    /** Whether {@code slot} is acquired and not released (false for a slot outside the pool). */
    public boolean isAcquired(int slot) {
        return slot >= 0 && slot < slotCount && acquired[slot];
    }

    /** Byte offset of {@code slot} in {@link #memory()}. */
    public int offset(int slot) {
        return (global == null ? slot : global[slot]) * slotBytes;
    }

    /** Virtual address of {@code slot}, for scatter/gather entries. */
    public long address(int slot) {
        return region.address() + (long) (global == null ? slot : global[slot]) * slotBytes;
    }

    /** The whole region's memory. */
    public UnsafeBuffer memory() {
        return memory;
    }

    public MemoryRegion region() {
        return region;
    }

    public int lkey() {
        return region.lkey();
    }

    public int slotBytes() {
        return slotBytes;
    }

    public int capacity() {
        return slotCount;
    }

    /** Slots currently acquired. */
    public int inUse() {
        return slotCount - freeCount;
    }

    /** Slots an {@link #acquire()} can take now (for a share: also bounded by what the region has free). */
    public int available() {
        if (parent == null || freeCount == 0) {
            return freeCount;
        }
        int unmappedFree = freeCount - (mapped - inUse());
        int n = freeCount - unmappedFree + Math.min(unmappedFree, parent.available());
        if (n == 0 && onRoom != null) {
            // what this share could use is held by other shares of the region: told when it comes back
            parent.whenFree(onRoom);
        }
        return n;
    }

    /**
     * A share: {@code hint} runs when a slot of the region comes back while {@link #available()} found none
     * ({@link SharedSlotRegion#whenFree}). No effect on a pool of its own (only its own releases free slots).
     */
    public void onRoom(Runnable hint) {
        this.onRoom = hint;
    }

    /** Registered bytes this pool holds now: its region, or a share's mapped slots. */
    public long heldBytes() {
        return (long) (parent == null ? slotCount : mapped) * slotBytes;
    }

    /**
     * Deregisters the region; a share gives every mapped slot back, acquired or not: the owner closes it
     * after destroying its queue pair, so no work request can still touch one. A release after that is
     * ignored.
     */
    @Override
    public void close() {
        if (parent == null) {
            region.deregister();
            return;
        }
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < slotCount; i++) {
            acquired[i] = false;
            if (global[i] >= 0) {
                parent.release(global[i]);
                global[i] = -1;
                mapped--;
            }
            free[i] = slotCount - 1 - i;
        }
        freeCount = slotCount;
    }

    @Override
    public String toString() {
        return "SlotPool{" + name + ", " + inUse() + "/" + slotCount + " x " + slotBytes + " bytes in use}";
    }
}
