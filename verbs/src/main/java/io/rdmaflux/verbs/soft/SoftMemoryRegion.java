package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import net.openhft.chronicle.bytes.BytesStore;
import org.jspecify.annotations.Nullable;

/**
 * A soft memory region: a direct buffer plus keys in the device's key table.
 *
 * <p>Keys: {@code lkey = index << 8 | generation << 1}, {@code rkey = lkey | 1}, where
 * {@code index} is the region's slot in the device's key table and the 7-bit generation starts at a
 * random value and changes each time a slot is reused; a slot is retired before its generation comes
 * round ({@link SoftKeyTable}), so a stale key names no region.
 *
 * <p>Deregistration invalidates both keys at once (the NIC checks validity on every access). Memory
 * from {@code allocateMemory} is counted as freed at deregistration ({@link SoftResources}); the
 * provider drops its last reference to the buffer then, and the JDK returns it to the OS when the
 * buffer is collected. Freeing explicitly would let a work request still in flight (a user error,
 * undefined in verbs) crash the JVM instead of reading stale memory; the NIC's copies keep the
 * buffer reachable while they run.
 */
final class SoftMemoryRegion implements MemoryRegion {
    private final SoftProtectionDomain pd;
    final ByteBuffer base;
    private final long address;
    private final int length;
    private final int lkey;
    private final int rkey;
    private final int access;
    private final boolean allocated;
    final int keyIndex;
    private volatile boolean valid = true;
    private @Nullable BytesStore<?, ?> bytes;

    SoftMemoryRegion(SoftProtectionDomain pd, ByteBuffer base, int access, boolean allocated, int keyIndex, int generation) {
        this.pd = pd;
        this.base = base;
        this.address = NativeMemory.address(base);
        this.length = base.capacity();
        this.access = access;
        this.allocated = allocated;
        this.keyIndex = keyIndex;
        this.lkey = keyIndex << 8 | (generation & 0x7F) << 1;
        this.rkey = lkey | 1;
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    SoftProtectionDomain pd() {
        return pd;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long length() {
        return length;
    }

    int lengthInt() {
        return length;
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public int access() {
        return access;
    }

    boolean allocated() {
        return allocated;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public ByteBuffer buffer() {
        checkValid();
        return base.duplicate().clear();
    }

    @Override
    public synchronized BytesStore<?, ?> bytes() {
        checkValid();
        BytesStore<?, ?> b = bytes;
        if (b == null) {
            b = BytesStore.follow(base);
            bytes = b;
        }
        return b;
    }

    private void checkValid() {
        if (!valid) {
            throw new VerbsException("memory region lkey=0x" + Integer.toHexString(lkey)
                + " was deregistered; register the memory again to use it");
        }
    }

    /**
     * Whether {@code [addr, addr + len)} lies inside the region.
     */
    boolean contains(long addr, long len) {
        return len >= 0 && addr >= address && addr - address <= length - len;
    }

    @Override
    public void deregister() {
        deregister(false);
    }

    /** The keys die at once; the stage completes when the transport says no peer can reach the memory ({@link FrameTransport.Attachment#regionDeregisteredAsync}). */
    @Override
    public CompletionStage<Void> deregisterAsync() {
        return deregister(true);
    }

    private CompletionStage<Void> deregister(boolean async) {
        BytesStore<?, ?> b;
        synchronized (this) {
            if (!valid) {
                return CompletableFuture.completedFuture(null);
            }
            valid = false;
            b = bytes;
            bytes = null;
        }
        CompletionStage<Void> outOfReach = pd.softDevice().resources().removeRegion(this, async);
        pd.forget(this);
        SoftResources.LIVE_MEMORY_REGIONS.decrementAndGet();
        if (allocated) {
            SoftResources.ALLOCATED_BYTES.addAndGet(-length);
            pd.softDevice().provider().allocatedBytes.addAndGet(-length);
        }
        pd.softDevice().provider().liveRegions.decrementAndGet();
        if (b != null) {
            b.releaseLast();
        }
        return outOfReach;
    }

    @Override
    public String toString() {
        return "mr{addr=0x" + Long.toHexString(address) + ", len=" + length + ", lkey=0x" + Integer.toHexString(lkey)
            + ", rkey=0x" + Integer.toHexString(rkey) + ", " + Access.toString(access) + (valid ? "" : ", deregistered") + "}";
    }
}
