package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import org.jspecify.annotations.Nullable;

/**
 * A queue pair's way into ERROR and out of its work: the error record (which send work request failed,
 * with which status and detail, and the detail the flushed ones carry) and the flush of its queues.
 *
 * <p>In ERROR, acknowledged send work requests complete with SUCCESS (if signaled), the failed one with
 * its error status, every later one (and every one posted afterwards) with WR_FLUSH_ERR, signaled or not;
 * every receive on the QP's own receive queue (not an SRQ's) completes with WR_FLUSH_ERR. A flush stops
 * when a CQ is full and goes on in a later engine pass. Only the RC requester fails a particular work
 * request ({@link #failAt}); other ways into ERROR (a user's {@code toError()}, a responder error, a CQ
 * overrun, a broken route with nothing outstanding) flush everything unacknowledged.
 *
 * <p>Thread-safety: the NIC's engine thread only.
 */
final class ErrorFlush {
    private final SoftQueuePair qp;
    private final int qpn;
    private final SendRing sq;
    private final SoftCompletionQueue sendCq;
    private final SoftCompletionQueue receiveCq;
    private final @Nullable ReceiveRing rq;
    private long errorIndex = -1;
    private WcStatus errorStatus = WcStatus.SUCCESS;
    private String errorDetail = "";
    /** Why the QP went to ERROR, for the detail of the completions it flushes; null: the plain detail. */
    private @Nullable String flushDetail;

    ErrorFlush(SoftQueuePair qp, SendRing sq, @Nullable ReceiveRing rq) {
        this.qp = qp;
        this.qpn = qp.qpn;
        this.sq = sq;
        this.sendCq = qp.sendCq;
        this.receiveCq = qp.receiveCq;
        this.rq = rq;
    }

    /** Moves the QP to ERROR because the send work request at {@code index} failed with {@code status}. */
    void failAt(long index, WcStatus status, @Nullable String detail) {
        errorIndex = index;
        errorStatus = status;
        errorDetail = detail == null ? status.name() : detail;
        flushDetail = "flushed: QP " + qpn + " is in ERROR after " + status + ": " + errorDetail;
        qp.enterError();
    }

    /** Moves the QP to ERROR with no send to fail; the flushed completions carry {@code reason}. */
    void fail(String reason) {
        flushDetail = "flushed: QP " + qpn + " is in ERROR: " + reason;
        qp.enterError();
    }

    /**
     * Completes the send work requests from {@code head} on (those before {@code ackedIndex} with SUCCESS)
     * while the send CQ has room and publishes the new head.
     *
     * @return the new head
     */
    long flushSends(long head, long ackedIndex) {
        long from = head;
        long tail = sq.engineTail();
        while (head < tail) {
            int slot = (int) head & sq.mask;
            WcStatus st;
            String detail;
            if (head < ackedIndex) {
                st = WcStatus.SUCCESS;
                detail = "";
            } else if (head == errorIndex) {
                st = errorStatus;
                detail = errorDetail;
            } else {
                st = WcStatus.WR_FLUSH_ERR;
                detail = flushDetail != null ? flushDetail : "flushed: QP " + qpn + " is in ERROR";
            }
            if (st != WcStatus.SUCCESS || sq.signaled[slot]) {
                if (!sendCq.hasRoom()) {
                    break;
                }
                sendCq.add(sq.wrId[slot], st, SendRing.wcOpcode(sq.op(slot)), sq.length[slot], false, 0, qpn, 0, detail);
            }
            if (sq.ah[slot] != null) {
                sq.ah[slot] = null;
            }
            head++;
        }
        if (head > from) {
            sq.head.lazySet(head);
        }
        return head;
    }

    /** Completes the receives on the QP's own receive queue with WR_FLUSH_ERR while the receive CQ has room; how many. */
    int flushReceives() {
        ReceiveRing ring = rq;
        int n = 0;
        if (ring != null) {
            int slot;
            while ((slot = ring.peek()) >= 0 && receiveCq.hasRoom()) {
                receiveCq.add(ring.wrIds[slot], WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpn, 0,
                    flushDetail != null ? flushDetail : "flushed: QP " + qpn + " is in ERROR");
                ring.consume();
                n++;
            }
        }
        return n;
    }
}
