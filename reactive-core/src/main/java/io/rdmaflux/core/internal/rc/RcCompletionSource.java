package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.core.internal.cq.SharedCompletionQueue;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import org.jspecify.annotations.Nullable;

import java.util.ArrayList;

/**
 * Where the completions of an {@link RcSubchannel}'s queue pair come from: its own CQ, polled by the
 * channel's duty cycle, or the device's CQ shared by the node's queue pairs, which hands them to the
 * channel by QP number (seed 000 &sect;5.1). A shared CQ may dispatch before the connection's first duty
 * cycle (the connection may still be under construction on the connecting thread): those completions
 * are kept as copies and replayed by {@link #attach()}.
 *
 * <p>Owns its own CQ (closed by {@link #close()}) and the registration with the shared one; it does not
 * own the shared CQ.
 *
 * <p><b>Concurrency:</b> progress thread only, except {@link #signalArrivals}, set once from the
 * connection's setup and read by the shared CQ's dispatch (hence volatile).
 */
final class RcCompletionSource {
    private static final int POLL_BATCH = 32;

    private final RcSubchannel ch;
    private final CompletionQueue cq;
    /** The device's CQ shared by the node's QPs (null: {@link #cq} is this channel's own). */
    private final @Nullable SharedCompletionQueue sharedCq;
    /** Shared CQ only: completions dispatched before the connection's first duty cycle, kept as copies. */
    private final ArrayList<WorkCompletion> heldCompletions = new ArrayList<>();
    private boolean attached;
    /** Shared-CQ mode: signals the connection's engine registration on each dispatched completion. */
    private volatile @Nullable Runnable arrivalHint;

    /** {@code cq} is {@code sharedCq.cq()} when {@code sharedCq} is given, else the channel's own. */
    RcCompletionSource(RcSubchannel ch, CompletionQueue cq, @Nullable SharedCompletionQueue sharedCq) {
        this.ch = ch;
        this.cq = cq;
        this.sharedCq = sharedCq;
    }

    /** Whether the CQ is the device's shared one. */
    boolean shared() {
        return sharedCq != null;
    }

    CompletionQueue cq() {
        return cq;
    }

    /** Shared CQ: from now on the progress thread may dispatch completions of {@code qpNumber} to the channel. */
    void register(int qpNumber) {
        sharedCq.register(qpNumber, this::onSharedCompletion);
    }

    /** The connection's first duty cycle: completions go to the channel from now on; @return those replayed */
    int attach() {
        if (attached) {
            return 0;
        }
        attached = true;
        int n = heldCompletions.size();
        for (WorkCompletion wc : heldCompletions) {
            ch.onCompletion(wc);
        }
        heldCompletions.clear();
        return n;
    }

    /** Own CQ: polls it to empty into the channel (a polling error fails the channel); @return completions polled */
    int poll() {
        int work = 0;
        try {
            int n;
            while (sharedCq == null && (n = cq.poll(POLL_BATCH, ch)) > 0) {
                work += n;
                if (n < POLL_BATCH) {
                    break;
                }
            }
        } catch (VerbsException e) {
            ch.fail(new RdmaTransportException("polling the CQ of rail " + ch.rail() + " failed: " + e.getMessage(), e.status(), e));
        }
        return work;
    }

    /** Signal-driven scheduling: completions call {@code hint}; true when they all do. */
    boolean signalArrivals(Runnable hint) {
        if (sharedCq != null) {
            arrivalHint = hint;
            return true;
        }
        return cq.arrivalHint(hint);
    }

    /** From the shared CQ's dispatcher (progress thread): held until the connection's first duty cycle. */
    private void onSharedCompletion(WorkCompletion wc) {
        Runnable hint = arrivalHint;
        if (hint != null) {
            // the connection's stages after the completion (delivery, credits) run in its own visit
            hint.run();
        }
        if (attached) {
            ch.onCompletion(wc);
        } else {
            heldCompletions.add(wc.copy());
        }
    }

    /**
     * Before the QP closes: what of it is still in the CQ goes back where it belongs (SRQ buffers to the
     * SRQ, the rest dropped).
     */
    void detach(int qpNumber, RcReceiveBuffers buffers) {
        if (sharedCq != null) {
            sharedCq.unregister(qpNumber, buffers.afterClose());
        } else if (buffers.shared()) {
            buffers.drain(cq);
        }
    }

    /** Destroys the channel's own CQ (a shared one stays the node's). */
    void close() {
        if (sharedCq == null) {
            cq.close();
        }
    }
}
