package io.rdmaflux.core.internal.buffer;

import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A bounded pool of registered whole-message buffers for the zero-copy rendezvous (seed 001 &sect;3.1:
 * pinned buffers reused instead of registered per message; the pin-down cache idea). One memory region
 * of {@code slots * slotBytes} bytes is registered once; slot {@code i} covers
 * {@code [i * slotBytes, (i + 1) * slotBytes)}. A node owns one pool per direction, so the memory a
 * node pins for large messages is bounded by {@code 2 * slots * slotBytes} whatever the number of
 * connections and however slowly consumers release.
 *
 * <p>Acquire and release are one CAS on a 64-bit free mask: lock-free, allocation-free, callable from
 * any thread (a received message is released on the application's thread). A release of a slot that is
 * not acquired throws, so double frees are caught where they happen.
 *
 * <p><b>Lifecycle:</b> {@link #close()} deregisters the region (idempotent); slots released after that
 * only update the mask.
 */
public final class MessageBufferPool implements AutoCloseable {
    /** Most slots a pool holds (one bit each in the free mask). */
    public static final int MAX_SLOTS = 64;

    private final String name;
    private final MemoryRegion region;
    /** The region registered on each of the node's devices: [0] is {@link #region}, the others register its memory again. */
    private final MemoryRegion[] regions;
    private final UnsafeBuffer memory;
    private final int slotBytes;
    private final int slots;
    private final AtomicLong free;
    /**
     * Who found the pool empty and waits for a slot ({@link #acquire(Runnable)}): each is run once on the next
     * release. A node's pools are shared by its connections, and an idle connection is only visited again
     * when signalled, so one that waits for a slot another connection frees must be told.
     */
    private final java.util.Set<Runnable> waiters = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Allocates and registers the pool.
     *
     * @param slots     in [1, {@value #MAX_SLOTS}]
     * @param slotBytes bytes per slot, &gt; 0; {@code slots * slotBytes} at most 2 GiB
     * @param access    {@code io.rdmaflux.verbs.Access} flags of the region
     * @throws IllegalArgumentException naming the value out of range
     */
    public MessageBufferPool(String name, ProtectionDomain pd, int slotBytes, int slots, int access) {
        this(name, java.util.List.of(pd), slotBytes, slots, access);
    }

    /**
     * Allocates the pool in {@code pds.get(0)} and registers the same memory in each further protection
     * domain (one per device of a node over several devices): {@link #lkey(int)} and {@link #rkey(int)}
     * give the keys on device {@code i}.
     *
     * @param pds one protection domain per device, at least one
     * @throws IllegalArgumentException naming the value out of range
     */
    public MessageBufferPool(String name, java.util.List<ProtectionDomain> pds, int slotBytes, int slots, int access) {
        if (pds.isEmpty()) {
            throw new IllegalArgumentException("at least one protection domain required for message buffer pool '" + name + "'");
        }
        if (slots < 1 || slots > MAX_SLOTS) {
            throw new IllegalArgumentException("slots in [1, " + MAX_SLOTS + "] required but it was " + slots);
        }
        if (slotBytes <= 0) {
            throw new IllegalArgumentException("slotBytes > 0 required but it was " + slotBytes);
        }
        long total = (long) slotBytes * slots;
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("message buffer pool '" + name + "' of " + slots + " x " + slotBytes + " bytes = "
                + total + " bytes exceeds 2 GiB; lower maxMessageBytes or rendezvousBuffers");
        }
        this.name = name;
        this.slotBytes = slotBytes;
        this.slots = slots;
        this.region = pds.get(0).allocateMemory(total, access);
        this.regions = new MemoryRegion[pds.size()];
        regions[0] = region;
        try {
            for (int i = 1; i < regions.length; i++) {
                regions[i] = pds.get(i).registerMemory(region.buffer(), access);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.memory = new UnsafeBuffer(region.address(), (int) total);
        this.free = new AtomicLong(slots == 64 ? -1L : (1L << slots) - 1);
    }

    /** @return a free slot, or -1 when every slot is in use */
    public int acquire() {
        for (;;) {
            long f = free.get();
            if (f == 0) {
                return -1;
            }
            int slot = Long.numberOfTrailingZeros(f);
            if (free.compareAndSet(f, f & ~(1L << slot))) {
                return slot;
            }
        }
    }

    /**
     * As {@link #acquire()}; when every slot is in use, {@code onFree} is run (once, on the releasing thread)
     * when a slot is next released. Give the same instance each time: a waiter is kept once.
     *
     * @return a free slot, or -1 (then {@code onFree} will run)
     */
    public int acquire(Runnable onFree) {
        int slot = acquire();
        if (slot >= 0) {
            return slot;
        }
        waiters.add(onFree);
        // a release between the failed acquire and the add ran no waiter: look again
        slot = acquire();
        if (slot >= 0) {
            waiters.remove(onFree);
        }
        return slot;
    }

    /**
     * Returns {@code slot}; waiters of {@link #acquire(Runnable)} are run.
     *
     * @throws IllegalStateException if the slot is not acquired (a double free)
     */
    public void release(int slot) {
        if (slot < 0 || slot >= slots) {
            throw new IllegalStateException("slot " + slot + " is not a slot of message buffer pool '" + name + "'");
        }
        long bit = 1L << slot;
        for (;;) {
            long f = free.get();
            if ((f & bit) != 0) {
                throw new IllegalStateException("slot " + slot + " of message buffer pool '" + name + "' released but it is not in use (double free)");
            }
            if (free.compareAndSet(f, f | bit)) {
                if (!waiters.isEmpty()) {
                    wakeWaiters();
                }
                return;
            }
        }
    }

    private void wakeWaiters() {
        for (java.util.Iterator<Runnable> it = waiters.iterator(); it.hasNext(); ) {
            Runnable w = it.next();
            it.remove();
            w.run();
        }
    }

    /** Byte offset of {@code slot} in {@link #memory()}. */
    public int offset(int slot) {
        return slot * slotBytes;
    }

    /** Virtual address of {@code slot}, for scatter/gather entries and CTS frames. */
    public long address(int slot) {
        return region.address() + (long) slot * slotBytes;
    }

    public UnsafeBuffer memory() {
        return memory;
    }

    public int lkey() {
        return region.lkey();
    }

    public int rkey() {
        return region.rkey();
    }

    /** The lkey on device {@code device} (index into the protection domains the pool was registered in). */
    public int lkey(int device) {
        return regions[device].lkey();
    }

    /** The rkey on device {@code device} (index into the protection domains the pool was registered in). */
    public int rkey(int device) {
        return regions[device].rkey();
    }

    public int slotBytes() {
        return slotBytes;
    }

    public int capacity() {
        return slots;
    }

    /** Slots acquired now. */
    public int inUse() {
        return slots - Long.bitCount(free.get());
    }

    @Override
    public void close() {
        // the further registrations first: the memory is the first region's
        for (int i = regions.length - 1; i >= 0; i--) {
            if (regions[i] != null) {
                regions[i].deregister();
            }
        }
    }

    @Override
    public String toString() {
        return "MessageBufferPool{" + name + ", " + inUse() + "/" + slots + " x " + slotBytes + " bytes in use}";
    }
}
