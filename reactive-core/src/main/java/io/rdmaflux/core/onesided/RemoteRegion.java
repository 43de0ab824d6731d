package io.rdmaflux.core.onesided;

import reactor.core.publisher.Mono;

/**
 * A region of registered memory one side of a connection exposed to the other for one-sided RDMA: the
 * owner's handle comes from {@link OneSided#expose}, the user's from {@link OneSided#remoteRegions()}.
 * Both describe the same region (same {@link #id()}, length and access); only the user's can be put into
 * or got from.
 *
 * <p><b>Lifetime:</b> valid from the exposure until {@link #revoke()} on either side, or until the
 * connection ends. The owner's revoke tells the user at once (new operations on it fail with
 * {@link RemoteAccessException}, reason REVOKED), waits for the user's operations under way to
 * complete, then deregisters the region's memory registration, so its rkeys are dead on every rail;
 * the user's revoke releases it the same way. The connection's end deregisters every region it exposed.
 * The owner's memory is the owner's again (to overwrite, reuse or free) once the owner's
 * {@link #revoke()} Mono completed, not before: after the connection ended too, since on a provider
 * whose peers write with keys of their own ({@code ucx}'s {@code ucp_put}) a write the peer issued
 * before the end may land until that provider confirmed the revocation
 * ({@link io.rdmaflux.verbs.MemoryRegion#deregisterAsync()}).
 *
 * <p><b>Concurrency:</b> thread-safe.
 */
public interface RemoteRegion {
    /** The region's id on its connection, chosen by the owner; the same on both sides. */
    int id();

    /** Length of the region in bytes. */
    long lengthBytes();

    /** The rights the owner granted the user. */
    RemoteAccess access();

    /** Whether this side exposed the region (the owner's handle) rather than received it. */
    boolean isOwner();

    /** Whether operations may still use the region: false once revoked on either side or the connection ended. */
    boolean isValid();

    /**
     * Ends the region's exposure (owner) or this side's use of it (user); idempotent.
     *
     * @return completes once the region's registration is gone on the owner's side and its memory out of
     *         the peer's reach (owner: after the user released it, or the connection ended, and the provider
     *         confirmed no RDMA with the old rkey can land, as {@code ibv_dereg_mr}'s return does; only
     *         then may the owner reuse the memory) or the release was sent (user); never errors. The owner's
     *         completes on the connection's progress thread, or, once the connection is closed, on the
     *         provider's (do not block in it)
     */
    Mono<Void> revoke();
}
