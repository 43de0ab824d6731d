package io.rdmaflux.verbs;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
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

    /**
     * Deregisters the region ({@code ibv_dereg_mr}); idempotent. Once it returns, later use of the keys
     * fails as the class comment says; a provider whose peers may hold the rkey for one-sided operations
     * of their own (the {@code ucx} provider's {@code ucp_put}/{@code ucp_get}) may block, bounded, until
     * they confirmed they no longer use it, and where it cannot block (its own progress thread) it returns
     * before that: use {@link #deregisterAsync()} to learn when the memory is out of remote reach.
     */
    void deregister();

    /**
     * Deregisters the region as {@link #deregister()} does (the keys are dead when it returns), without
     * ever blocking, and returns a stage that completes once no remote access with the old rkey can reach
     * the memory any more: only then may the caller reuse or free memory a peer could write or read
     * (what {@code ibv_dereg_mr} guarantees on its return). Idempotent: a second call returns a stage
     * completed at once.
     *
     * <p><b>Completion:</b> normally, never exceptionally. At once where {@link #deregister()} gives the
     * guarantee itself (the default: this calls {@link #deregister()} and returns a completed stage). The
     * {@code ucx} provider, once every peer that received the region's UCX rkey acknowledged the
     * revocation (its puts and gets with it completed), is gone, or was taken for failed after the
     * provider's {@code revoke-timeout} (its connections then fail; the memory stays mapped and reachable
     * until the device closes, as a late put of a live but silent peer over shared memory may still land
     * there), or when its device closes. Nothing completes it while nobody progresses an INVOKER provider.
     *
     * <p><b>Concurrency:</b> any thread, including the provider's progress thread; dependent actions may
     * run on that thread (inside its progress pass) and must not block.
     */
    default CompletionStage<Void> deregisterAsync() {
        deregister();
        return CompletableFuture.completedFuture(null);
    }

    /** Same as {@link #deregister()}. */
    @Override
    default void close() {
        deregister();
    }
}
