package io.rdmaflux.core;

import io.rdmaflux.core.internal.buffer.MessageBufferPool;
import io.rdmaflux.core.internal.regcache.CacheEntry;
import io.rdmaflux.core.internal.regcache.RegistrationCache;
import io.rdmaflux.core.internal.regcache.UserRegion;
import org.jspecify.annotations.Nullable;

/**
 * Where the bytes of a large (rendezvous) message are read from by the NIC, the sender's WRITE or the
 * receiver's READ. Application memory sent by reference (a direct {@link java.nio.ByteBuffer} message,
 * or a region from {@link RdmaNode#registerMemory}) is registered through the node's
 * {@link RegistrationCache} (seed 001 &sect;3.1's pin-down cache, seed 000 &sect;5.1) and pinned there
 * until the NIC is done with it; anything else (heap memory, which the GC moves, or a direct buffer the
 * cache bypasses) is copied once into a registered staging slot of the node's send pool, whose region
 * allows REMOTE_READ so the READ rendezvous can read it too.
 *
 * <p>On a connection whose rails span several devices every large message is staged: the staging slots
 * are registered on every device, the cache and application regions on the node's first device only.
 *
 * <p><b>Concurrency:</b> progress thread only (the cache and the pool are thread-safe themselves).
 */
final class RendezvousSource {
    private final MessageBufferPool staging;
    private final RegistrationCache cache;
    /** Rails over several devices: never by reference, always a staging copy. */
    private final boolean stageOnly;

    RendezvousSource(MessageBufferPool staging, RegistrationCache cache, boolean stageOnly) {
        this.staging = staging;
        this.cache = cache;
        this.stageOnly = stageOnly;
    }

    /**
     * Pins the registration of a message sent by reference.
     *
     * @return the pinned entry; {@link RegistrationCache#WAIT} (pinned entries fill the cache's budget: try
     *     again later); or null: stage a copy (not sent by reference, the cache bypasses it, or the region
     *     was deregistered)
     */
    @Nullable CacheEntry pin(RdmaMessage m, int length, Runnable onRoom) {
        if (stageOnly) {
            return null;
        }
        if (m instanceof RegisteredMessage rm) {
            return rm.region() instanceof UserRegion ur && cache.pinUser(ur) ? ur.entry() : null;
        }
        if (m instanceof DirectBufferMessage dm) {
            CacheEntry e = cache.acquire(dm.buffer(), dm.address(), length, onRoom);
            return e == RegistrationCache.BYPASS ? null : e;
        }
        return null;
    }

    /** Gives a pin back: the NIC no longer touches the memory, or the send did not start. */
    void unpin(CacheEntry e) {
        cache.release(e);
    }

    /** A staging slot, or -1 while every one carries a message in progress. */
    int acquireStaging(Runnable onFree) {
        return staging.acquire(onFree);
    }

    void releaseStaging(int slot) {
        staging.release(slot);
    }

    /** Bytes of one staging slot (the longest message a staging copy holds). */
    int stagingSlotBytes() {
        return staging.slotBytes();
    }

    /**
     * Records in {@code entry} of {@code t} where message {@code m} is read from: the memory it pins
     * ({@code pinned}; the message kept until the send completes), a region registered outside the cache
     * ({@code stagingSlot} -1; kept too), or a copy into {@code stagingSlot} (the message released now).
     */
    void use(RendezvousSends t, int entry, RdmaMessage m, int stagingSlot, @Nullable CacheEntry pinned) {
        if (pinned != null) {
            long address = m instanceof RegisteredMessage rm ? rm.address() : ((DirectBufferMessage) m).address();
            t.source(entry, -1, address, pinned.lkey(), pinned.rkey(), pinned, m);
        } else if (stagingSlot < 0) {
            RegisteredMessage rm = (RegisteredMessage) m;
            t.source(entry, -1, rm.address(), rm.region().lkey(), rm.region().rkey(), null, rm);
        } else {
            m.writeTo(staging.memory(), staging.offset(stagingSlot));
            m.release();
            t.source(entry, stagingSlot, staging.address(stagingSlot), staging.lkey(), staging.rkey(), null, null);
        }
    }

    /** Releases what {@code entry} of {@code t} holds: its staging slot, its pin, its message. */
    void release(RendezvousSends t, int entry) {
        t.releaseSource(entry, staging::release, cache::release);
    }
}
