package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.internal.buffer.SlotPool;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;

/**
 * The lifecycle of an {@link RcSubchannel}: established (a frame from the peer arrived, or this is the
 * connecting side and connected: the peer's QP is ready and this side may send), failed and closed, and
 * what the way into each does to the QP, the send queue, the CQ and the pools. Every part of the channel
 * fails it through here (by way of the channel); the send path reads the state through the channel's
 * final field.
 *
 * <p><b>Establishment:</b> {@link #connect} connects the QP to the peer's; the connecting side is
 * established at once and its first frame (a CREDIT, so the accepting side may send) goes from the next
 * duty cycle ({@link #sendFirstFrameIfDue()}); the accepting side waits for the first frame from the peer.
 *
 * <p><b>Failure:</b> the first {@link #fail} moves the QP to ERROR and tells the listener, whose
 * {@code onFailure} still sees the frame held back by selective signalling; that frame is dropped after.
 * Later failures are ignored. {@link #abort()} fails without telling the listener (the connection asked
 * for it).
 *
 * <p><b>Teardown:</b> {@link #close()} drops the held-back frame, detaches the QP from its CQ (SRQ
 * buffers still in the CQ go back to the SRQ, the rest is dropped), then destroys the QP, the channel's
 * own CQ and both pools, in that order; a second call does nothing.
 *
 * <p><b>Concurrency:</b> progress thread only, after construction, except {@link #connect} (the
 * connection manager's thread, before the connection's first duty cycle) and {@link #closeUnregistered()}
 * (the constructing thread).
 */
final class RcLifecycle {
    private final RcSubchannel ch;
    private final QueuePair qp;
    private final SlotPool sendPool;
    private final RcSendQueue sendQueue;
    private final RcControlSender control;
    private final RcReceiveBuffers receive;
    private final RcCompletionSource completions;
    /** The connecting side's first frame (a CREDIT) is still to be sent, by the next duty cycle. */
    private boolean firstFrameDue;
    private boolean established;
    private boolean failed;
    private boolean closed;

    RcLifecycle(RcSubchannel ch, QueuePair qp, SlotPool sendPool, RcSendQueue sendQueue, RcControlSender control,
                RcReceiveBuffers receive, RcCompletionSource completions) {
        this.ch = ch;
        this.qp = qp;
        this.sendPool = sendPool;
        this.sendQueue = sendQueue;
        this.control = control;
        this.receive = receive;
        this.completions = completions;
    }

    /** Connects the QP to {@code remote}; {@code connecting}: this side is established and sends the first frame. */
    void connect(QpEndpoint remote, boolean connecting) {
        qp.connect(remote);
        if (connecting) {
            established = true;
            // sent by the first duty cycle: connect runs on the connection manager's thread, and a send
            // buffer taken here would race the progress thread's check-then-take on a node-wide shared
            // send region (sharedSendBuffers), which then found none (SlotPool.offset(-1))
            firstFrameDue = true;
        }
    }

    /** The duty cycle: the connecting side's first frame, if still due (dropped once failed); @return 1 if it went or was dropped */
    int sendFirstFrameIfDue() {
        if (firstFrameDue && (failed || control.sendFirstFrame())) {
            // the connecting side's first frame (see connect), on the progress thread
            firstFrameDue = false;
            return 1;
        }
        return 0;
    }

    /** Whether a frame from the peer arrived, or this is the connecting side and connected. */
    boolean established() {
        return established;
    }

    /** The peer's QP is ready: this side may send. */
    void markEstablished() {
        established = true;
    }

    boolean failed() {
        return failed;
    }

    boolean closed() {
        return closed;
    }

    /** The error a failed completion of a {@code what} work request fails the channel with, its status explained. */
    RdmaException transportError(String what, WorkCompletion wc) {
        WcStatus status = wc.status();
        String detail = wc.detail();
        String why = switch (status) {
            case RETRY_EXC_ERR -> "the peer or the path is gone (transport retries exhausted)";
            case RNR_RETRY_EXC_ERR -> "the peer posted no receive in time";
            case WR_FLUSH_ERR -> "the queue pair is in ERROR";
            default -> "the completion failed";
        };
        return new RdmaTransportException(what + " on rail " + ch.rail() + " completed with " + status + ": " + why
            + (detail.isEmpty() ? "" : " (" + detail + ")"), status, null);
    }

    /** The first failure: QP to ERROR, the listener told, the held-back frame dropped; later ones are ignored. */
    void fail(RdmaException e) {
        if (failed) {
            return;
        }
        failed = true;
        try {
            qp.toError();
        } catch (VerbsException ignored) {
            // the QP may already be closed; the failure is reported below either way
        }
        ChannelEvents l = ch.listener();
        if (l != null) {
            // the frame held back by selective signaling is dropped after this, so that onFailure still sees it
            l.onFailure(ch, e);
        }
        sendQueue.dropDeferred();
    }

    /** Fails the channel without telling the listener (unless it failed or closed already). */
    void abort() {
        if (!failed && !closed) {
            failed = true;
            sendQueue.dropDeferred();
            try {
                qp.toError();
            } catch (VerbsException ignored) {
                // closing anyway
            }
        }
    }

    /** Detaches the QP from its CQ and destroys the QP, the channel's own CQ and the pools. */
    void close() {
        if (closed) {
            return;
        }
        sendQueue.dropDeferred();
        // what of this QP is still in the CQ: SRQ buffers go back to the SRQ, the rest is dropped
        completions.detach(qp.qpNumber(), receive);
        closed = true;
        qp.close();
        completions.close();
        sendPool.close();
        receive.close();
    }

    /** The channel could not register with the shared CQ (so none of its completions went anywhere): frees the QP and the pools. */
    void closeUnregistered() {
        closed = true;
        qp.close();
        sendPool.close();
        receive.close();
    }
}
