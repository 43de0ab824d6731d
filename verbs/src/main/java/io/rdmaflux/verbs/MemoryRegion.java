package io.rdmaflux.verbs;

import java.nio.ByteBuffer;
import net.openhft.chronicle.bytes.BytesStore;

/**
 * A registered memory region ({@code ibv_mr}): off-heap memory the NIC may access, never moved by
 * the GC. Backed by a direct {@link ByteBuffer} (what DiSNI registers) seen through a Chronicle
 * {@link BytesStore} for typed access.
 *
 * <p>Addresses are virtual addresses as in verbs: {@link #address()} is the native address of the
 * first byte, and a work request names {@code [address, address + length)} inside it. Peers name
 * the region by {@link #rkey()} and an address in it.
 *
 * <p><b>Concurrency:</b> the accessors are thread-safe; the memory itself is the user's to
 * coordinate with outstanding work requests, as in verbs. <b>Lifecycle:</b>
 * {@link #deregister()} invalidates {@link #lkey()} and {@link #rkey()} at once: later local use
 * completes with LOC_PROT_ERR, later remote use with REM_ACCESS_ERR. Memory the provider allocated
 * for the region is freed on deregistration; memory the caller passed in stays the caller's.
 */
public interface MemoryRegion extends AutoCloseable {
    /** The protection domain the region is registered in. */
    ProtectionDomain protectionDomain();

    /** Native address of the first byte. */
    long address();

    /** Length in bytes. */
    long length();

    /** Local key, for scatter/gather entries. */
    int lkey();

    /** Remote key, for peers' RDMA READ/WRITE. */
    int rkey();

    /** The {@link Access} flags it was registered with. */
    int access();

    /** Whether the region is still registered. */
    boolean isValid();

    /** A view of the region's memory (position 0, limit = capacity = length); a new view per call. */
    ByteBuffer buffer();

    /** The region's memory as a Chronicle bytes store (offset 0 is {@link #address()}). */
    BytesStore<?, ?> bytes();

    /** Deregisters the region ({@code ibv_dereg_mr}); idempotent. */
    void deregister();

    /** Same as {@link #deregister()}. */
    @Override
    default void close() {
        deregister();
    }
}
