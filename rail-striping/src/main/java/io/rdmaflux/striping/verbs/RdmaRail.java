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
 * A rail that carries each stripe of an {@link RdmaPut} as one signaled RDMA WRITE on an RC queue
 * pair, with the stripe id as work request id. Its send completion queue must serve this queue
 * pair alone, so that completions map to this rail; RC completes in post order, as
 * {@link RailSubchannel} requires.
 *
 * <p>An error completion (RETRY_EXC_ERR when the port is down, REM_ACCESS_ERR for a bad rkey...)
 * or a refused post reports the rail as failed; the flushed completions that follow are ignored.
 *
 * <p><b>Concurrency:</b> {@link #post} and {@link #poll} from one thread at a time (the progress
 * thread driving the rails); the work request is reused, so posting allocates nothing.
 */
public final class RdmaWriteRail implements RailSubchannel<RdmaPut> {
    private static final int POLL_BATCH = 64;

    private final QueuePair queuePair;
    private final CompletionQueue sendCq;
    private final SendWorkRequest wr = new SendWorkRequest();
    private final CompletionHandler handler = new CompletionHandler();
    private @Nullable StripeListener listener;
    private int rail;
    private boolean failed;
    private long nowNs;

    /**
     * @param queuePair a connected RC queue pair (RTS)
     * @param sendCq    its send completion queue, used by no other queue pair
     */
    public RdmaWriteRail(QueuePair queuePair, CompletionQueue sendCq) {
        this.queuePair = queuePair;
        this.sendCq = sendCq;
    }

    @Override
    public void start(int rail, StripeListener listener) {
        this.rail = rail;
        this.listener = listener;
        this.failed = false;
    }

    @Override
    public void post(Stripe<RdmaPut> stripe) {
        if (failed) {
            return;
        }
        RdmaPut put = stripe.message();
        if (stripe.lengthBytes() > Integer.MAX_VALUE) {
            fail(new VerbsException("stripe of " + stripe.lengthBytes() + " bytes exceeds one work request; use a smaller "
                + "switchover threshold or more rails"));
            return;
        }
        RailBuffers b = put.buffers();
        if (rail >= b.railCount()) {
            fail(new VerbsException("rail " + rail + " has no registration in the put's RailBuffers (" + b.railCount()
                + " rails); register the buffer on every rail's device"));
            return;
        }
        long at = put.offset() + stripe.offsetBytes();
        wr.reset().wrId(stripe.stripeId()).opcode(WrOpcode.RDMA_WRITE).signaled(true)
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
        listener = null;
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
        StripeListener l = listener;
        if (l != null) {
            l.onRailFailed(rail, cause, nowNs);
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
            StripeListener l = listener;
            if (l != null) {
                l.onStripeCompleted(rail, wc.wrId(), nowNs);
            }
        }
    }
}
