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
 * <p><b>Concurrency:</b> not thread-safe; one progress thread owns a pool. <b>Lifecycle:</b>
 * {@link #close()} deregisters the region (idempotent).
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
    }

    /** @return a free slot index, or -1 when all are in use */
    public int acquire() {
        if (freeCount == 0) {
            return -1;
        }
        int slot = free[--freeCount];
        acquired[slot] = true;
        return slot;
    }

    /**
     * Returns {@code slot} to the pool.
     *
     * @throws IllegalStateException if the slot is not acquired (a double free)
     */
    public void release(int slot) {
        if (slot < 0 || slot >= slotCount || !acquired[slot]) {
            throw new IllegalStateException("slot " + slot + " of pool '" + name + "' released but it is not in use (double free)");
        }
        acquired[slot] = false;
        free[freeCount++] = slot;
    }

    /** Whether {@code slot} is acquired and not released (false for a slot outside the pool). */
    public boolean isAcquired(int slot) {
        return slot >= 0 && slot < slotCount && acquired[slot];
    }

    /** Byte offset of {@code slot} in {@link #memory()}. */
    public int offset(int slot) {
        return slot * slotBytes;
    }

    /** Virtual address of {@code slot}, for scatter/gather entries. */
    public long address(int slot) {
        return region.address() + (long) slot * slotBytes;
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

    public int available() {
        return freeCount;
    }

    @Override
    public void close() {
        region.deregister();
    }

    @Override
    public String toString() {
        return "SlotPool{" + name + ", " + inUse() + "/" + slotCount + " x " + slotBytes + " bytes in use}";
    }
}
