package io.rdmaflux.core.internal.buffer;

import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One registered memory region of fixed-size slots that many connections draw from through
 * {@link SlotPool#share shares}: the node-wide pre-pinned pool of seed 001 &sect;3.1 registered once
 * per node and rail instead of once per connection, so that a connection costs no registration and no
 * fresh (page-faulted, zeroed) memory. Registering and zeroing a connection's own send and receive
 * pools was most of what an eager {@code connect} cost (about 1.1 MiB per side with the defaults,
 * 3.7 ms per side on the 2-core CI host, see the README's "Many peers").
 *
 * <p>Slots are numbered from 0; slot {@code g} covers {@code [g * slotBytes, (g + 1) * slotBytes)} of the
 * region. {@link #acquire()} and {@link #release(int)} are O(1) on an index stack.
 *
 * <p><b>Concurrency:</b> thread-safe (a short lock: the connections of a node share it, and a
 * connecting thread may send its first frame while the progress thread serves the others).
 * <b>Lifecycle:</b> {@link #close()} deregisters the region; slots still acquired then are the
 * owners' bug, reported by {@link #inUse()}.
 */
public final class SharedSlotRegion implements AutoCloseable {
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
     * @throws IllegalArgumentException if a size is not positive or the product exceeds 2 GiB, naming it
     */
    public SharedSlotRegion(String name, ProtectionDomain pd, int slotBytes, int slotCount, int access) {
        if (slotBytes <= 0) {
            throw new IllegalArgumentException("slotBytes > 0 required but it was " + slotBytes);
        }
        if (slotCount <= 0) {
            throw new IllegalArgumentException("slotCount > 0 required but it was " + slotCount);
        }
        long total = (long) slotBytes * slotCount;
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("shared region '" + name + "' of " + slotCount + " x " + slotBytes + " bytes = " + total
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

    private final java.util.Set<Runnable> waiters = new java.util.LinkedHashSet<>();

    /** @return a free slot, or -1 when every slot is acquired */
    public synchronized int acquire() {
        if (freeCount == 0) {
            return -1;
        }
        int slot = free[--freeCount];
        acquired[slot] = true;
        return slot;
    }

    /**
     * Returns {@code slot}.
     *
     * @throws IllegalStateException if it is not acquired (a double free), naming the slot and the region
     */
    public synchronized void release(int slot) {
        if (slot < 0 || slot >= slotCount || !acquired[slot]) {
            throw new IllegalStateException("slot " + slot + " of shared region '" + name + "' released but it is not in use (double free)");
        }
        acquired[slot] = false;
        free[freeCount++] = slot;
        if (!waiters.isEmpty()) {
            // cheap, non-blocking hints (a connection's signal): run under the lock, each once
            for (Runnable w : waiters) {
                w.run();
            }
            waiters.clear();
        }
    }

    /**
     * {@code onFree} runs once (on the releasing thread, under this region's lock) at the next release, if
     * no slot is free now: the connections of a node share the region, and an idle connection is visited
     * again only when signalled. Runs at once when a slot is free.
     */
    public void whenFree(Runnable onFree) {
        synchronized (this) {
            if (freeCount == 0) {
                waiters.add(onFree);
                return;
            }
        }
        onFree.run();
    }

    public synchronized int available() {
        return freeCount;
    }

    public synchronized int inUse() {
        return slotCount - freeCount;
    }

    public int offset(int slot) {
        return slot * slotBytes;
    }

    public long address(int slot) {
        return region.address() + (long) slot * slotBytes;
    }

    public UnsafeBuffer memory() {
        return memory;
    }

    public MemoryRegion region() {
        return region;
    }

    public int slotBytes() {
        return slotBytes;
    }

    public int capacity() {
        return slotCount;
    }

    /** Registered bytes of the region. */
    public long registeredBytes() {
        return (long) slotBytes * slotCount;
    }

    @Override
    public void close() {
        region.deregister();
    }

    @Override
    public String toString() {
        return "SharedSlotRegion{" + name + ", " + inUse() + "/" + slotCount + " x " + slotBytes + " bytes in use}";
    }
}
