package io.rdmaflux.core.onesided;

import io.rdmaflux.verbs.MemoryRegion;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One-sided RDMA on a connection, after seed 002 (Vishnu et al., "MPI-2 One Sided Communication on
 * Multi-Rail InfiniBand Clusters", &sect;3): one side exposes registered memory, the other puts (RDMA
 * WRITE) into it and gets (RDMA READ) from it with no work of the owner's CPU, striped over the
 * connection's rails.
 *
 * <p><b>Striping (&sect;3.2 "Scheduling Policies"):</b> a transfer below the switchover threshold goes
 * whole on one rail, the one with the fewest outstanding bytes of its direction (round robin among
 * equals); a larger one is split by <i>load balanced fragmentation</i>: each usable rail gets the share
 * that brings its outstanding bytes up to a common level, which is an equal split on idle rails. Puts
 * and gets have separate queues with their own outstanding-byte counts, and each duty cycle alternates
 * which queue posts first, so interleaved puts and gets load both link directions (&sect;4.3, Fig. 17).
 * Ordering is relaxed inside an epoch (&sect;3.2 "Ordering Relaxation"): transfers complete in any order.
 *
 * <p><b>Epochs (&sect;3.2 "Multiple Synchronization Messages"):</b> the transfers issued between two
 * {@link #fence()} calls form an access epoch. The fence waits for every one of them to complete, then
 * sends one synchronization message on every subchannel the epoch's puts and gets used; the target
 * announces the epoch on {@link #epochs()} once it holds all of them, and acknowledges it, which
 * completes the fence.
 *
 * <p><b>A rail failing:</b> fragments in flight on it are posted again on the surviving rails (a put or
 * get is idempotent, so a fragment placed twice is harmless), and an epoch whose synchronization
 * messages were under way on it sends them again, one generation higher, on the survivors: the epoch
 * <i>completes on the surviving rails</i>. Only when no rail is left do the operations fail, with the
 * connection's error.
 *
 * <p><b>Atomics:</b> {@link #fetchAndAdd} and {@link #compareAndSwap} run one verbs atomic (ATOMIC_FETCH_AND_ADD,
 * ATOMIC_CMP_AND_SWP) on an 8-byte aligned word of a region exposed with an ATOMIC right
 * ({@link RemoteAccess#allowsAtomic()}), on one rail, and emit the word's value from before the operation. They
 * are atomic with respect to every other atomic on the same word (from either rail, and from other connections
 * to the same memory), not with respect to puts into it or the owner's plain stores. <b>Ordering:</b> atomics
 * are not ordered with the puts and gets of their epoch, nor with each other, until a fence: like MPI-3's
 * accumulate operations ({@code MPI_Fetch_and_op}, {@code MPI_Compare_and_swap}) next to {@code MPI_Put}, a put
 * and an atomic on the same word in one epoch leave an undefined value. To order an atomic after a put, wait
 * for the put's Mono (or end the epoch with {@link #fence()}, which waits for every put, get and atomic issued
 * before it) before issuing the atomic. An atomic's Mono completing means it ran at the target. The word is a
 * 64-bit integer in the byte order of the owner's host (native order on the soft provider). An atomic in
 * flight on a rail that fails errors with {@code RdmaTransportException}: it may or may not have run, and
 * unlike a put or get fragment it is not posted again.
 *
 * <p><b>Errors:</b> bad arguments ({@code IllegalArgumentException}) and refused remote access
 * ({@link RemoteAccessException}) error only the operation, with nothing posted; a closed connection
 * errors with {@code ConnectionClosedException}. An operation that reaches the owner's NIC with a dead
 * rkey (a peer that skipped the checks) fails the rail with REM_ACCESS_ERR, and the owner's memory is
 * untouched.
 *
 * <p><b>Concurrency:</b> every method is thread-safe; signals are emitted from the node's progress thread.
 */
public interface OneSided {
    /**
     * Exposes all of {@code region} to the peer with {@code access}.
     *
     * @see #expose(MemoryRegion, long, long, RemoteAccess)
     */
    default Mono<RemoteRegion> expose(MemoryRegion region, RemoteAccess access) {
        return expose(region, 0, region.length(), access);
    }

    /**
     * Exposes {@code [offset, +lengthBytes)} of {@code region} to the peer: registers that memory again
     * with the remote access flags {@code access} allows (so the NIC enforces bounds and rights, and a
     * revoke can kill its rkeys without touching {@code region}), and sends the peer its address, length,
     * access and the rkey of every rail.
     *
     * @param region registered with this connection's node ({@code RdmaNode.registerMemory}), valid
     * @return the owner's handle, once the exposure was sent; errors with {@code IllegalArgumentException}
     *         for a region of another node, a deregistered one or a range outside it, and with
     *         {@code ConnectionClosedException} on a closed connection
     */
    Mono<RemoteRegion> expose(MemoryRegion region, long offset, long lengthBytes, RemoteAccess access);

    /**
     * The regions the peer exposed on this connection: those still valid when subscribed, then each new
     * one as it arrives. Completes when the connection ends. Any number of subscribers.
     */
    Flux<RemoteRegion> remoteRegions();

    /**
     * Writes {@code lengthBytes} from {@code [localOffset, +lengthBytes)} of {@code local} into
     * {@code [remoteOffset, +lengthBytes)} of {@code remote} (RDMA WRITE, striped over the rails).
     *
     * @return completes when every byte is in the target's memory (every fragment's RDMA WRITE completed);
     *         the target is told at the next {@link #fence()}
     */
    Mono<Void> put(MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes);

    /**
     * Reads {@code lengthBytes} from {@code [remoteOffset, +lengthBytes)} of {@code remote} into
     * {@code [localOffset, +lengthBytes)} of {@code local} (RDMA READ, striped over the rails).
     *
     * @return completes when every byte is in {@code local}
     */
    Mono<Void> get(MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes);

    /**
     * Atomically adds {@code delta} (two's complement, wrapping) to the 64-bit word at {@code offsetBytes} of
     * {@code remote} (a verbs ATOMIC_FETCH_AND_ADD). See "Atomics" above for atomicity and ordering.
     *
     * @param offsetBytes bytes from the region's start; the word's address must be a multiple of 8
     * @return the word's value before the addition, once the target ran it; errors with
     *         {@link RemoteAccessException} (nothing posted) for a misaligned word (ALIGNMENT), a word past the end
     *         (BOUNDS), a region exposed without ATOMIC (RIGHTS), a revoked one (REVOKED) or one not from this
     *         connection's peer (NOT_REMOTE); with {@code UnsupportedCapabilityException} on a node whose provider
     *         has no atomics ({@code DeviceCapabilities.atomics()}: disni)
     */
    Mono<Long> fetchAndAdd(RemoteRegion remote, long offsetBytes, long delta);

    /**
     * Atomically replaces the 64-bit word at {@code offsetBytes} of {@code remote} with {@code update} if it
     * equals {@code expect} (a verbs ATOMIC_CMP_AND_SWP). See "Atomics" above for atomicity and ordering.
     *
     * @return the word's value before the operation (equal to {@code expect} exactly when the swap happened);
     *         errors as {@link #fetchAndAdd}
     */
    Mono<Long> compareAndSwap(RemoteRegion remote, long offsetBytes, long expect, long update);

    /**
     * The streaming form: issues the transfers of {@code transfers} as they come, keeping at most
     * {@code maxOutstandingBytes} in flight (one transfer longer than that goes alone) and never more
     * transfers in flight or completed-and-unemitted than the subscriber requested. Emits each transfer
     * when it completed, in completion order (ordering is relaxed inside an epoch). The first transfer
     * that fails errors the Flux and cancels {@code transfers}; those in flight still complete.
     *
     * @throws IllegalArgumentException if {@code maxOutstandingBytes} is not positive
     */
    Flux<Transfer> transfers(Publisher<Transfer> transfers, long maxOutstandingBytes);

    /**
     * Ends the current access epoch: once every put, get and atomic issued before this call completed, sends a
     * synchronization message on every subchannel the epoch used and waits for the target's
     * acknowledgement.
     *
     * @return the epoch, once every put of it is in the target's memory and the target was told; errors
     *         if an operation of the epoch failed (naming how many and the first error) or the connection
     *         ended first
     */
    Mono<Epoch> fence();

    /**
     * The peer's completed access epochs, in order: each means every put the peer issued in it is in this
     * side's memory. One subscriber for the connection's lifetime (a second gets
     * {@code IllegalStateException}); epochs completed before it subscribed are kept for it. Completes
     * when the connection ends.
     */
    Flux<Epoch> epochs();
}
