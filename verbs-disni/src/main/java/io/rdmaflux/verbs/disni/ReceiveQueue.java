package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * The receive queue of one {@code disni} QP: receives posted before the native QP exists are held
 * (copied into a ring of {@code maxReceiveWr}) and posted in order by {@link #postHeld}; the count of
 * native ones bounds the queue with them.
 *
 * <p><b>Concurrency:</b> not thread-safe; the QP's lock guards it.
 */
final class ReceiveQueue {
    private final DisniCompletionQueue cq;
    private final int qpn;
    private final ReceiveWorkRequest[] held;
    private int head;
    private int heldCount;
    private int outstandingNatively;

    ReceiveQueue(DisniCompletionQueue cq, int qpn, int capacity) {
        this.cq = cq;
        this.qpn = qpn;
        this.held = new ReceiveWorkRequest[capacity];
    }

    /** Whether {@code maxReceiveWr} receives are outstanding. */
    boolean full() {
        return heldCount + outstandingNatively >= held.length;
    }

    /** Posts {@code wr} natively through {@code poster}, or holds it when null. @throws IOException from the native post */
    void post(ReceiveWorkRequest wr, @Nullable ReceivePoster poster) throws IOException {
        if (poster != null) {
            poster.post(wr);
            outstandingNatively++;
            return;
        }
        int at = (head + heldCount) % held.length;
        ReceiveWorkRequest copy = held[at];
        if (copy == null || wr.numSge() == 0) {
            copy = new ReceiveWorkRequest(); // the SPI has no way to empty a request's SGE list
            held[at] = copy;
        }
        copy.wrId(wr.wrId());
        for (int i = 0; i < wr.numSge(); i++) {
            if (i == 0) {
                copy.sge(wr.sge(0).address(), wr.sge(0).length(), wr.sge(0).lkey());
            } else {
                copy.addSge(wr.sge(i).address(), wr.sge(i).length(), wr.sge(i).lkey());
            }
        }
        heldCount++;
    }

    /** Posts the held receives in order. @throws IOException when a native post fails */
    void postHeld(ReceivePoster poster) throws IOException {
        while (heldCount > 0) {
            poster.post(held[head]);
            outstandingNatively++;
            head = (head + 1) % held.length;
            heldCount--;
        }
    }

    /** Completes every held receive with WR_FLUSH_ERR. */
    void failHeld() {
        while (heldCount > 0) {
            cq.add(held[head].wrId(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpn, "flushed: QP " + qpn + " is in ERROR");
            head = (head + 1) % held.length;
            heldCount--;
        }
    }

    /** One native receive completed. */
    void completed() {
        outstandingNatively--;
    }
}
