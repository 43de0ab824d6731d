package io.rdmaflux.verbs.soft;

/**
 * The results of a responder's most recent atomics, by PSN, so a duplicate atomic request is answered
 * with the value the first execution returned and never executed twice ("atomic replay"): an
 * InfiniBand responder saves each atomic's result in its responder resources and, for a duplicate
 * atomic request (a PSN before the expected one), sends the saved ATOMIC Acknowledge again instead of
 * repeating the operation (IBA Vol. 1, chapter 9.7, reliable service: duplicate requests; the Linux
 * soft-RoCE responder, {@code rxe_resp.c duplicate_request}, does the same). A duplicate whose result
 * is no longer held is dropped (a class D error there); it cannot be one the requester still waits for,
 * since a requester keeps at most {@link SoftAtomics#DEPTH} atomics unanswered, the number of results
 * kept here.
 *
 * <p>Where duplicates come from: on the mem fabric, the requester's go-back-N after an ACK timeout or
 * a PSN sequence NAK, and the rail's injected RC loss, duplication and reordering; on the net fabric,
 * the same timer and NAK retransmissions over the TCP stream (TCP itself never duplicates, but the RC
 * requester above it retransmits when a response is late, e.g. a slow or paused peer, and after a
 * lost frame the injected faults drop).
 *
 * <p><b>Concurrency:</b> engine thread of the responder's NIC only.
 */
final class AtomicReplayCache {
    private final int[] psns = new int[SoftAtomics.DEPTH];
    private final long[] results = new long[SoftAtomics.DEPTH];
    private final boolean[] used = new boolean[SoftAtomics.DEPTH];
    private int next;
    private long lastResult;

    /** Saves the result of the atomic with {@code psn}, replacing the oldest one kept. */
    void saved(int psn, long result) {
        psns[next] = psn;
        results[next] = result;
        used[next] = true;
        next = (next + 1) % psns.length;
    }

    /** Whether the result of {@code psn} is kept; if so, {@link #lastResult()} is it. */
    boolean find(int psn) {
        for (int i = 0; i < psns.length; i++) {
            if (used[i] && psns[i] == psn) {
                lastResult = results[i];
                return true;
            }
        }
        return false;
    }

    /** The result {@link #find} found. */
    long lastResult() {
        return lastResult;
    }

    /** Forgets everything (the QP connected again). */
    void clear() {
        java.util.Arrays.fill(used, false);
        next = 0;
    }
}
