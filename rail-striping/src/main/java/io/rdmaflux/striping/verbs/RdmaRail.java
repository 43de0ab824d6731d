package io.rdmaflux.striping.verbs;

import io.rdmaflux.striping.RailSubchannel;
import io.rdmaflux.striping.Stripe;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import org.jspecify.annotations.Nullable;

/**
 * A rail that carries each stripe of an {@link RdmaPut} as one signaled RDMA WRITE, and of an
 * {@link RdmaGet} as one RDMA READ, on an RC queue pair. Its send completion queue must serve this
 * queue pair alone, so that completions map to this rail; RC completes in post order, as
 * {@link RailSubchannel} requires.
 *
 * <p>Puts and gets may be reported to different listeners ({@link #start(Direction, int,
 * StripeListener)}), which is how {@link OneSidedRails} keeps separate put and get queues over the
 * same rails (seed 002 §3.2): the work request id is the stripe id with the direction in bit 62.
 *
 * <p>An error completion (RETRY_EXC_ERR when the port is down, REM_ACCESS_ERR for a bad rkey...)
 * or a refused post reports the rail as failed; the flushed completions that follow are ignored.
 *
 * <p><b>Concurrency:</b> {@link #post} and {@link #poll} from one thread at a time (the progress
 * thread driving the rails); the work request is reused, so posting allocates nothing.
 */
public final class RdmaRail implements RailSubchannel<RdmaTransfer> {
    private static final int POLL_BATCH = 64;
    private static final long GET_BIT = 1L << 62;

    /** Which link direction a transfer loads. */
    public enum Direction {
        /** RDMA WRITE: local to remote. */
        PUT,
        /** RDMA READ: remote to local. */
        GET
    }

    private final QueuePair queuePair;
    private final CompletionQueue sendCq;
    private final SendWorkRequest wr = new SendWorkRequest();
    private final CompletionHandler handler = new CompletionHandler();
    private @Nullable StripeListener putListener;
    private @Nullable StripeListener getListener;
    private int rail;
    private boolean failed;
    private long nowNs;

    /**
     * @param queuePair a connected RC queue pair (RTS)
     * @param sendCq    its send completion queue, used by no other queue pair
     */
    public RdmaRail(QueuePair queuePair, CompletionQueue sendCq) {
        this.queuePair = queuePair;
        this.sendCq = sendCq;
    }

    /** Puts and gets both report to {@code listener} (one queue for both kinds). */
    @Override
    public void start(int rail, StripeListener listener) {
        this.rail = rail;
        this.putListener = listener;
        this.getListener = listener;
        this.failed = false;
    }

    /** Transfers of {@code direction} report to {@code listener}. */
    public void start(Direction direction, int rail, StripeListener listener) {
        this.rail = rail;
        if (direction == Direction.PUT) {
            this.putListener = listener;
        } else {
            this.getListener = listener;
        }
    }

    @Override
    public void post(Stripe<RdmaTransfer> stripe) {
        if (failed) {
            return;
        }
        RdmaTransfer put = stripe.message();
        if (stripe.lengthBytes() > Integer.MAX_VALUE) {
            fail(new VerbsException("stripe of " + stripe.lengthBytes() + " bytes exceeds one work request; use a smaller "
                + "switchover threshold or more rails"));
            return;
        }
        RailBuffers b = put.buffers();
        if (rail >= b.railCount()) {
            fail(new VerbsException("rail " + rail + " has no registration in the transfer's RailBuffers (" + b.railCount()
                + " rails); register the buffer on every rail's device"));
            return;
        }
        long at = put.offset() + stripe.offsetBytes();
        boolean get = put instanceof RdmaGet;
        wr.reset().wrId(get ? stripe.stripeId() | GET_BIT : stripe.stripeId()).opcode(get ? WrOpcode.RDMA_READ : WrOpcode.RDMA_WRITE)
            .signaled(true)
            .sge(b.local(rail), at, (int) stripe.lengthBytes())
            .remoteAddress(b.remoteAddress() + at).rkey(b.remoteRkey(rail));
        if (!queuePair.postSend(wr)) {
            fail(new VerbsException("rail " + rail + ": send queue of QP " + queuePair.qpNumber()
                + " is full; give it maxSendWr >= maxInFlightMessages * rails"));
        }
    }

    /**
     * Polls the send completion queue and reports completions at {@code nowNs}.
     *
     * @return completions seen
     */
    public int poll(long nowNs) {
        this.nowNs = nowNs;
        return sendCq.poll(POLL_BATCH, handler);
    }

    @Override
    public void stop() {
        putListener = null;
        getListener = null;
    }

    /** Whether this rail reported a failure. */
    public boolean failed() {
        return failed;
    }

    /** The queue pair carrying this rail. */
    public QueuePair queuePair() {
        return queuePair;
    }

    private void fail(Throwable cause) {
        if (failed) {
            return;
        }
        failed = true;
        StripeListener p = putListener;
        StripeListener g = getListener;
        if (p != null) {
            p.onRailFailed(rail, cause, nowNs);
        }
        if (g != null && g != p) {
            g.onRailFailed(rail, cause, nowNs);
        }
    }

    private final class CompletionHandler implements io.rdmaflux.verbs.CompletionSink {
        @Override
        public void onCompletion(WorkCompletion wc) {
            if (failed) {
                return;
            }
            if (!wc.isSuccess()) {
                fail(new VerbsException("rail " + rail + ": " + wc.status() + " " + wc.detail()));
                return;
            }
            long id = wc.wrId();
            StripeListener l = (id & GET_BIT) != 0 ? getListener : putListener;
            if (l != null) {
                l.onStripeCompleted(rail, id & ~GET_BIT, nowNs);
            }
        }
    }
}
