package io.rdmaflux.core.internal.regcache;

import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import net.openhft.chronicle.bytes.BytesStore;

import java.nio.ByteBuffer;

/**
 * A region the application registered through the node ({@code RdmaNode.registerMemory}), entered in
 * the node's {@link RegistrationCache} so that direct-buffer messages inside it hit without a second
 * registration. {@link #deregister()} is the invalidation: from then on {@link #isValid()} is false and
 * no new send uses the region, and the registration itself is dropped at once, or, when sends in
 * flight still pin it, as soon as the last of them completed (so their RDMA operations never meet an
 * invalid key).
 *
 * <p><b>Concurrency:</b> thread-safe, as {@link MemoryRegion}.
 */
public final class UserRegion implements MemoryRegion {
    private final RegistrationCache cache;
    private final CacheEntry entry;

    UserRegion(RegistrationCache cache, CacheEntry entry) {
        this.cache = cache;
        this.entry = entry;
    }

    /** The cache entry (pinned by each send from the region). */
    public CacheEntry entry() {
        return entry;
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return entry.region().protectionDomain();
    }

    @Override
    public long address() {
        return entry.address;
    }

    @Override
    public long length() {
        return entry.lengthBytes;
    }

    @Override
    public int lkey() {
        return entry.lkey();
    }

    @Override
    public int rkey() {
        return entry.rkey();
    }

    @Override
    public int access() {
        return entry.region().access();
    }

    /** False once the application deregistered it (even while a send in flight still pins the registration). */
    @Override
    public boolean isValid() {
        return cache.isLive(entry) && entry.region().isValid();
    }

    @Override
    public ByteBuffer buffer() {
        return entry.region().buffer();
    }

    @Override
    public BytesStore<?, ?> bytes() {
        return entry.region().bytes();
    }

    @Override
    public void deregister() {
        cache.invalidateUser(entry);
    }

    @Override
    public String toString() {
        return "UserRegion{" + entry + "}";
    }
}
