package io.rdmaflux.ud.dr;

import java.util.ArrayList;
import java.util.List;

/**
 * The rails one peer is reached on, which of them failed, and when each failed rail is probed next (seed 003
 * &sect;4.2: "after several retransmission attempts over one BTL, the PML marks that BTL as failed, and begins
 * using a different BTL"). Deviation: DR never returns to a failed BTL; here a failed rail is probed every
 * {@link DrConfig#deadRailProbeIntervalNs()} and comes back when a probe is answered, so a flapping link does
 * not shrink the peer's rails for good. Not thread-safe.
 */
final class RailSet {
    private final boolean[] failed;
    private final long[] nextProbeNs;
    private final int[] retriesWhenFailed;
    private int current;
    private int retries;

    RailSet(int rails) {
        if (rails < 1 || rails > 64) {
            throw new IllegalArgumentException("rails in [1, 64] required but it was " + rails);
        }
        failed = new boolean[rails];
        nextProbeNs = new long[rails];
        retriesWhenFailed = new int[rails];
    }

    int rails() {
        return failed.length;
    }

    /** The rail the peer's traffic goes on. */
    int current() {
        return current;
    }

    /** Retransmission timeouts in a row on the current rail without progress. */
    int retries() {
        return retries;
    }

    void countRetry() {
        retries++;
    }

    void progress() {
        retries = 0;
    }

    boolean isFailed(int rail) {
        return failed[rail];
    }

    /**
     * Fails the current rail and moves to the next one that has not failed.
     *
     * @return the new current rail, or -1 when every rail failed
     */
    int failCurrent(long nowNs, long probeIntervalNs) {
        failed[current] = true;
        retriesWhenFailed[current] = retries;
        nextProbeNs[current] = nowNs + probeIntervalNs;
        retries = 0;
        for (int i = 1; i <= failed.length; i++) {
            int r = (current + i) % failed.length;
            if (!failed[r]) {
                current = r;
                return r;
            }
        }
        return -1;
    }

    /** A probe on {@code rail} was answered: it may carry traffic again. @return whether it had failed */
    boolean revive(int rail) {
        if (rail < 0 || rail >= failed.length || !failed[rail]) {
            return false;
        }
        failed[rail] = false;
        return true;
    }

    /** The failed rail whose probe is due at {@code nowNs} (and reschedules it), or -1. */
    int dueProbe(long nowNs, long probeIntervalNs) {
        for (int r = 0; r < failed.length; r++) {
            if (failed[r] && nowNs - nextProbeNs[r] >= 0) {
                nextProbeNs[r] = nowNs + probeIntervalNs;
                return r;
            }
        }
        return -1;
    }

    /** The earliest probe deadline of a failed rail, or {@code Long.MAX_VALUE}. */
    long nextProbeDeadlineNs() {
        long d = Long.MAX_VALUE;
        for (int r = 0; r < failed.length; r++) {
            if (failed[r]) {
                d = Math.min(d, nextProbeNs[r]);
            }
        }
        return d;
    }

    /** What each rail did before it failed, for an error message: "rail 0 (8 retries), rail 1 (8 retries)". */
    String describeFailed() {
        List<String> parts = new ArrayList<>();
        for (int r = 0; r < failed.length; r++) {
            if (failed[r]) {
                parts.add("rail " + r + " (" + retriesWhenFailed[r] + " retries)");
            }
        }
        return String.join(", ", parts);
    }
}
