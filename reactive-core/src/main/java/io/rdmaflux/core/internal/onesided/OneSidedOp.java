package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.verbs.MemoryRegion;
import org.jspecify.annotations.Nullable;

/**
 * One put or get under way: what it moves, the access epoch it belongs to, its fragments not yet
 * completed and the rails they used.
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

    final boolean put;
    final MemoryRegion local;
    final long localOffset;
    final PeerRegion remote;
    final long remoteOffset;
    final int lengthBytes;
    final Completion completion;
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
        return (put ? "put of " : "get of ") + lengthBytes + " bytes " + (put ? "to " : "from ") + remote + " at offset " + remoteOffset;
    }
}
