package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.VerbsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import net.openhft.chronicle.bytes.BytesStore;
import org.agrona.BufferUtil;
import org.jspecify.annotations.Nullable;

/**
 * A memory region registered with {@code ibv_reg_mr} over a direct buffer (DiSNI's
 * {@code IbvPd.regMr(ByteBuffer, access)}), so the GC never moves it. Memory the provider allocated
 * ({@link ProtectionDomain#allocateMemory}) is freed on {@link #deregister()}; caller memory stays the
 * caller's.
 *
 * <p><b>Concurrency:</b> thread-safe.
 */
final class DisniMemoryRegion implements MemoryRegion {
    private final DisniProtectionDomain pd;
    private final RdmaSeam.Mr mr;
    private final ByteBuffer base;
    private final boolean owned;
    private final int access;
    private @Nullable BytesStore<?, ?> bytes;
    private boolean valid = true;

    DisniMemoryRegion(DisniProtectionDomain pd, RdmaSeam.Mr mr, ByteBuffer base, boolean owned, int access) {
        this.pd = pd;
        this.mr = mr;
        this.base = base;
        this.owned = owned;
        this.access = access;
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    @Override
    public long address() {
        return mr.address();
    }

    @Override
    public long length() {
        return base.capacity();
    }

    @Override
    public int lkey() {
        return mr.lkey();
    }

    @Override
    public int rkey() {
        return mr.rkey();
    }

    @Override
    public int access() {
        return access;
    }

    @Override
    public synchronized boolean isValid() {
        return valid;
    }

    @Override
    public synchronized ByteBuffer buffer() {
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
            throw new VerbsException("memory region lkey=0x" + Integer.toHexString(mr.lkey())
                + " was deregistered; register the memory again to use it");
        }
    }

    @Override
    public void deregister() {
        BytesStore<?, ?> b;
        synchronized (this) {
            if (!valid) {
                return;
            }
            valid = false;
            b = bytes;
            bytes = null;
        }
        pd.forget(this);
        try {
            mr.dereg();
        } catch (IOException e) {
            throw new VerbsException("ibv_dereg_mr failed for lkey=0x" + Integer.toHexString(mr.lkey()) + ": " + e.getMessage(), e);
        } finally {
            if (b != null) {
                b.releaseLast();
            }
            if (owned) {
                pd.provider().regionFreed(base.capacity());
                BufferUtil.free(base);
            }
        }
    }

    @Override
    public String toString() {
        return "mr{addr=0x" + Long.toHexString(address()) + ", len=" + length() + ", lkey=0x" + Integer.toHexString(lkey())
            + ", rkey=0x" + Integer.toHexString(rkey()) + ", " + Access.toString(access) + (isValid() ? "" : ", deregistered") + "}";
    }
}
