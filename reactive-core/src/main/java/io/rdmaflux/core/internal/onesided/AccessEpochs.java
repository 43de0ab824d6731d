package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.frame.EpochSyncFrameCodec;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.onesided.Epoch;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.MonoSink;

import java.util.ArrayDeque;

/**
 * The origin's access epochs (seed 002 &sect;3.2): the operations issued between two fences belong to
 * one epoch; a fence closes it, and once every operation of it completed, one synchronization message
 * (EPOCH_SYNC) goes on every subchannel the epoch used (only the live ones; with none, on the control
 * rail), and the fence completes when the target's EPOCH_ACK comes. Epochs synchronize one at a time,
 * in order.
 *
 * <p><b>A rail failing mid-epoch:</b> the fragments it carried were posted again on the survivors before
 * the epoch's operations completed, so the epoch completes on the survivors. If a rail of the
 * synchronization fails before the acknowledgement, the synchronization is sent again, one generation
 * higher, on the survivors of its mask (the target counts only the highest generation's messages). An
 * epoch one of whose operations failed fails its fence, naming how many failed and the first error.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class AccessEpochs {
    /** One epoch: the origin's counts, and its synchronization's state once closed. */
    static final class Record {
        final int number;
        int operations;
        int puts;
        long bytesPut;
        long railsUsed;
        int failed;
        @Nullable Throwable firstError;
        @Nullable MonoSink<Epoch> fence;
        boolean syncing;
        int generation;
        long syncMask;

        Record(int number) {
            this.number = number;
        }
    }

    private final ControlFrames control;
    private Record current = new Record(0);
    private final ArrayDeque<Record> closed = new ArrayDeque<>();
    private long syncsSent;

    AccessEpochs(ControlFrames control) {
        this.control = control;
    }

    void opStarted(OneSidedOp op) {
        op.epoch = current;
        current.operations++;
        if (op.put) {
            current.puts++;
            current.bytesPut += op.lengthBytes;
        }
    }

    void opEnded(OneSidedOp op, @Nullable Throwable error) {
        Record r = op.epoch;
        if (r == null) {
            return;
        }
        r.operations--;
        r.railsUsed |= op.railsUsed;
        if (error != null) {
            r.failed++;
            if (r.firstError == null) {
                r.firstError = error;
            }
        }
    }

    /** Closes the current epoch; {@code fence} completes when the target acknowledged it. */
    void fence(MonoSink<Epoch> fence) {
        current.fence = fence;
        closed.add(current);
        current = new Record(current.number + 1);
    }

    /**
     * Starts the head epoch's synchronization when its operations completed, and sends it again when a
     * rail of it failed.
     *
     * @param alive the rails that carry one-sided work now
     * @return work done
     */
    int progress(long alive) {
        int work = 0;
        Record head;
        while ((head = closed.peek()) != null) {
            if (!head.syncing) {
                if (head.operations > 0) {
                    return work;
                }
                if (head.failed > 0) {
                    closed.poll();
                    Throwable first = head.firstError;
                    java.util.Objects.requireNonNull(head.fence).error(new io.rdmaflux.core.RdmaTransportException("epoch " + head.number + ": " + head.failed + " of its "
                        + "operations failed, first: " + (first == null ? "?" : first.getMessage()), null, first));
                    work++;
                    continue;
                }
                if (!startSync(head, head.railsUsed & alive, alive)) {
                    return work;
                }
                return work + 1;
            }
            if ((head.syncMask & ~alive) != 0) {
                head.generation++;
                startSync(head, head.syncMask & alive, alive);
                return work + 1;
            }
            return work;
        }
        return work;
    }

    private boolean startSync(Record r, long mask, long alive) {
        if (mask == 0) {
            int rail = Long.numberOfTrailingZeros(alive);
            if (alive == 0) {
                return false;
            }
            mask = 1L << rail;
        }
        r.syncing = true;
        r.syncMask = mask;
        long m = mask;
        int number = r.number;
        int generation = r.generation;
        int puts = r.puts;
        long bytes = r.bytesPut;
        long syncMask = mask;
        while (m != 0) {
            int rail = Long.numberOfTrailingZeros(m);
            m &= m - 1;
            control.send(rail, FrameType.EPOCH_SYNC,
                (b, off, credits) -> EpochSyncFrameCodec.encode(b, off, number, credits, syncMask, generation, puts, bytes), () -> syncsSent++);
        }
        return true;
    }

    /** The target acknowledged epoch {@code number}: its fence completes. @return whether it was the epoch waited for */
    boolean onAck(int number) {
        Record head = closed.peek();
        if (head == null || !head.syncing || head.number != number) {
            return false;
        }
        closed.poll();
        java.util.Objects.requireNonNull(head.fence).success(new Epoch(head.number, head.puts, head.bytesPut, head.syncMask));
        return true;
    }

    /** The connection ended: every closed epoch's fence errors with {@code error}. */
    void terminate(Throwable error) {
        Record r;
        while ((r = closed.poll()) != null) {
            java.util.Objects.requireNonNull(r.fence).error(error);
        }
    }

    /** Synchronization messages sent so far (one per subchannel per epoch and generation). */
    long syncsSent() {
        return syncsSent;
    }

    int epochsWaiting() {
        return closed.size();
    }
}
