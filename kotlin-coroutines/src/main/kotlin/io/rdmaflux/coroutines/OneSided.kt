/*
 * Suspending and Flow views of one-sided RDMA on a connection (RdmaConnection.oneSided(), seed 002):
 * thin extensions over the Java API, no logic duplicated from it.
 */
@file:JvmName("RdmaOneSided")

package io.rdmaflux.coroutines

import io.rdmaflux.core.RdmaConnection
import io.rdmaflux.core.onesided.Epoch
import io.rdmaflux.core.onesided.RemoteAccess
import io.rdmaflux.core.onesided.RemoteRegion
import io.rdmaflux.verbs.MemoryRegion
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactive.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * Exposes `[offset, offset + lengthBytes)` of [region] (registered with this connection's node) to the peer
 * with [access], and suspends until the exposure was sent; returns the owner's handle.
 *
 * **Cancellation:** cancellable; an exposure already registered when the coroutine is cancelled is
 * still announced to the peer (revoke it, or close the connection, to end it).
 *
 * @throws IllegalArgumentException for a region of another node, a deregistered one, or a range outside it
 * @throws io.rdmaflux.core.ConnectionClosedException if the connection is closed
 */
suspend fun RdmaConnection.exposeAwait(
    region: MemoryRegion,
    access: RemoteAccess,
    offset: Long = 0,
    lengthBytes: Long = region.length() - offset,
): RemoteRegion = expose(region, offset, lengthBytes, access).awaitSingle()

/** The regions the peer exposed (those valid now, then each new one), as a cold [Flow]; completes when the connection ends. */
fun RdmaConnection.remoteRegionsAsFlow(): Flow<RemoteRegion> = remoteRegions().asFlow()

/**
 * Puts (RDMA WRITE) [lengthBytes] from `[localOffset, +lengthBytes)` of [local] into `[remoteOffset, +lengthBytes)`
 * of [remote], striped over the rails, and suspends until every byte is in the peer's memory.
 *
 * **Cancellation:** cancellable, but only the wait: RDMA already posted cannot be recalled and may still
 * land; the operation still counts in the current epoch.
 *
 * @throws io.rdmaflux.core.onesided.RemoteAccessException if the range is outside the region, the region
 *   is not writable, or it was revoked (nothing was written)
 * @throws IllegalArgumentException for a non-positive length, negative offsets or a local region of another node
 * @throws io.rdmaflux.core.RdmaTransportException if every rail failed
 */
suspend fun RdmaConnection.putAwait(local: MemoryRegion, localOffset: Long, remote: RemoteRegion, remoteOffset: Long, lengthBytes: Int) {
    put(local, localOffset, remote, remoteOffset, lengthBytes).awaitSingleOrNull()
}

/**
 * Gets (RDMA READ) [lengthBytes] from `[remoteOffset, +lengthBytes)` of [remote] into `[localOffset, +lengthBytes)`
 * of [local], striped over the rails, and suspends until every byte is in [local].
 *
 * Cancellable (the wait only, as [putAwait]); throws as [putAwait], with READ in place of WRITE.
 */
suspend fun RdmaConnection.getAwait(local: MemoryRegion, localOffset: Long, remote: RemoteRegion, remoteOffset: Long, lengthBytes: Int) {
    get(local, localOffset, remote, remoteOffset, lengthBytes).awaitSingleOrNull()
}

/**
 * Atomically adds [delta] to the 64-bit word at [offsetBytes] of [remote] (verbs ATOMIC_FETCH_AND_ADD) and
 * suspends until the target ran it; returns the word's value before the addition. Atomics are not ordered
 * with the puts and gets of their epoch until [fenceAwait] (or until the earlier operation returned), as
 * MPI-3's accumulate operations next to `MPI_Put`.
 *
 * **Cancellation:** cancellable, but only the wait: a posted atomic cannot be recalled and may still run.
 *
 * @throws io.rdmaflux.core.onesided.RemoteAccessException if the word is not 8-byte aligned (ALIGNMENT), past
 *   the end (BOUNDS), the region was exposed without ATOMIC (RIGHTS) or revoked (REVOKED); nothing was posted
 * @throws io.rdmaflux.core.UnsupportedCapabilityException on a node whose provider has no atomics
 * @throws io.rdmaflux.core.RdmaTransportException if its rail failed with it in flight (it may or may not have run)
 */
suspend fun RdmaConnection.fetchAndAddAwait(remote: RemoteRegion, offsetBytes: Long, delta: Long): Long =
    fetchAndAdd(remote, offsetBytes, delta).awaitSingle()

/**
 * Atomically replaces the 64-bit word at [offsetBytes] of [remote] with [update] if it equals [expect] (verbs
 * ATOMIC_CMP_AND_SWP) and suspends until the target ran it; returns the word's value before, which equals
 * [expect] exactly when the swap happened. Cancellable and throwing as [fetchAndAddAwait].
 */
suspend fun RdmaConnection.compareAndSwapAwait(remote: RemoteRegion, offsetBytes: Long, expect: Long, update: Long): Long =
    compareAndSwap(remote, offsetBytes, expect, update).awaitSingle()

/**
 * Ends the current access epoch and suspends until the target holds every put of it and acknowledged it
 * (one synchronization message per subchannel used, seed 002 §3.2).
 *
 * **Cancellation:** cancellable (the wait only: the epoch is closed either way).
 *
 * @throws io.rdmaflux.core.RdmaTransportException if an operation of the epoch failed
 * @throws io.rdmaflux.core.ConnectionClosedException if the connection ended first
 */
suspend fun RdmaConnection.fenceAwait(): Epoch = fence().awaitSingle()

/** The peer's completed access epochs as a [Flow]: one collector for the connection's lifetime. */
fun RdmaConnection.epochsAsFlow(): Flow<Epoch> = epochs().asFlow()

/**
 * Revokes (owner) or releases (user) the region and suspends until its registration is gone (owner) or the
 * release was sent (user). Cancellable (the wait only); never throws.
 */
suspend fun RemoteRegion.revokeAwait() {
    revoke().awaitSingleOrNull()
}
