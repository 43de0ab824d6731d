package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.verbs.MemoryRegion;
import org.jspecify.annotations.Nullable;

/**
 * One put, get or atomic under way: what it moves (an atomic: its operands, and its result once
 * answered), the access epoch it belongs to, its fragments not yet completed and the rails they used.
 *
 * <p><b>Concurrency:</b> created on any thread, then progress thread only.
 */
final class OneSidedOp {
    /** Told once, on the progress thread, how the operation ended. */
    @FunctionalInterface
    interface Completion {
        /** @param error null on success */
        void completed(@Nullable Throwable error);
    }

    /** {@link #atomic} of a put or get. */
    static final int NOT_ATOMIC = 0;
    static final int FETCH_ADD = 1;
    static final int CMP_SWAP = 2;

    final boolean put;
    /** The local memory of a put or get; null for an atomic (its result lands in the engine's own memory). */
    final @Nullable MemoryRegion local;
    final long localOffset;
    final PeerRegion remote;
    final long remoteOffset;
    final int lengthBytes;
    final Completion completion;
    /** {@link #NOT_ATOMIC}, {@link #FETCH_ADD} or {@link #CMP_SWAP}. */
    final int atomic;
    /** An atomic's operands: the value to add or compare with, and the value to swap in. */
    final long compareAdd;
    final long swap;
    /** An atomic's result once answered: the remote word's value before it. */
    long result;
    AccessEpochs.@Nullable Record epoch;
    int fragmentsLeft;
    long railsUsed;
    private boolean done;

    OneSidedOp(boolean put, MemoryRegion local, long localOffset, PeerRegion remote, long remoteOffset, int lengthBytes,
               Completion completion) {
        this.put = put;
        this.local = local;
        this.localOffset = localOffset;
        this.remote = remote;
        this.remoteOffset = remoteOffset;
        this.lengthBytes = lengthBytes;
        this.completion = completion;
        this.atomic = NOT_ATOMIC;
        this.compareAdd = 0;
        this.swap = 0;
    }

    /** An atomic ({@link #FETCH_ADD} or {@link #CMP_SWAP}) on the 8 bytes at {@code remoteOffset} of {@code remote}. */
    OneSidedOp(int atomic, PeerRegion remote, long remoteOffset, long compareAdd, long swap, Completion completion) {
        this.put = false;
        this.local = null;
        this.localOffset = 0;
        this.remote = remote;
        this.remoteOffset = remoteOffset;
        this.lengthBytes = Long.BYTES;
        this.completion = completion;
        this.atomic = atomic;
        this.compareAdd = compareAdd;
        this.swap = swap;
    }

    boolean isAtomic() {
        return atomic != NOT_ATOMIC;
    }

    boolean isDone() {
        return done;
    }

    /** Marks it ended; @return false if it had ended already */
    boolean end() {
        if (done) {
            return false;
        }
        done = true;
        return true;
    }

    String describe() {
        if (isAtomic()) {
            return (atomic == FETCH_ADD ? "fetchAndAdd on " : "compareAndSwap on ") + remote + " at offset " + remoteOffset;
        }
        return (put ? "put of " : "get of ") + lengthBytes + " bytes " + (put ? "to " : "from ") + remote + " at offset " + remoteOffset;
    }
}
