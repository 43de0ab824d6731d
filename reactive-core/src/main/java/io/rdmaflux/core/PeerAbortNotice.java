package io.rdmaflux.core;

import io.rdmaflux.core.engine.ProgressEngine;
import io.rdmaflux.verbs.ThreadingMode;

import java.util.Collection;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * What {@link RdmaNode#close()} does before it frees its connections: it aborts each one through its
 * own duty cycle, which sends an ABORT on every live rail, and gives the progress thread a bounded
 * moment ({@link #LINGER_NS} of real time, or {@link #INVOKER_PASSES} duty cycles in INVOKER mode) to
 * put them on the wire. So a server that shuts down tells its clients ({@link ConnectionClosedException}
 * with {@code byPeer()} true) instead of leaving each to find out from its next send's exhausted
 * retries ({@code RETRY_EXC_ERR}), and an idle client learns it at all. Best effort: a rail that is
 * down, a peer that is gone, or a provider nobody drives (an INVOKER node with
 * {@code driveProvider(false)}) still leaves the peer to its retries, as a crash does.
 *
 * <p>Called on the closing thread, never the progress thread (close refuses that).
 */
final class PeerAbortNotice {
    /** Longest wait for the progress thread to send the ABORTs, ns. */
    static final long LINGER_NS = 100_000_000L;
    /** Duty cycles an INVOKER node runs (on the closing thread) to send them. */
    static final int INVOKER_PASSES = 64;
    /** Duty cycles run after every connection ended, so a node that drives its provider transmits the ABORTs. */
    private static final int FLUSH_PASSES = 4;

    private PeerAbortNotice() {
    }

    static void abortAndLinger(ProgressEngine engine, Collection<DefaultRdmaConnection> connections) {
        if (connections.isEmpty()) {
            return;
        }
        // onClose completes on the progress thread when a connection ends: a count any thread can read
        AtomicInteger open = new AtomicInteger(connections.size());
        for (DefaultRdmaConnection c : connections) {
            c.onClose().subscribe(null, e -> open.decrementAndGet(), open::decrementAndGet);
            c.abort();
        }
        if (engine.mode() == ThreadingMode.INVOKER) {
            int flush = FLUSH_PASSES;
            for (int i = 0; i < INVOKER_PASSES && flush > 0; i++) {
                engine.invoke();
                if (open.get() == 0) {
                    flush--;
                }
            }
            return;
        }
        engine.wake();
        long deadline = System.nanoTime() + LINGER_NS;
        while (open.get() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(200_000);
        }
        // one more moment for the provider's thread to take the ABORTs off the send queues
        LockSupport.parkNanos(1_000_000);
    }
}
