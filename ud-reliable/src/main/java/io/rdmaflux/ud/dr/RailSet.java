package io.rdmaflux.ud.dr;

import java.util.ArrayList;
import java.util.List;

/**
 * The rails one peer is reached on, which of them failed, and when each failed rail is probed next (seed 003
 * &sect;4.2: "after several retransmission attempts over one BTL, the PML marks that BTL as failed, and begins
 * using a different BTL"). Deviation: DR never returns to a failed BTL; here a failed rail is probed every
 * {@link DrConfig#deadRailProbeIntervalNs()} and comes back when a probe is answered, so a flapping link does
 * not shrink the peer's rails for good.
 *
 * <p><b>When a rail is given up</b> ({@link #exhausted}): only when both more than {@code maxRetriesPerRail}
 * timeouts fired in a row without progress <em>and</em> no ACK came from the peer on the rail for
 * {@code railTimeoutNs} (since it became the current rail, if later). The count alone, measured in RTOs of a few
 * &mu;s to ms, let one garbage-collection pause or a descheduled progress thread fail a live peer; the time alone
 * would let one late timer after a long local stall fail it. Any ACK (also a duplicate or a probe reply) is
 * evidence the peer is there and hears us, and restarts the clock; DATA or a PROBE from the peer is not (it does not
 * show that our datagrams reach it, so a rail dead in one direction still fails over). Not thread-safe.
 */
final class RailSet {
    private final boolean[] failed;
    private final long[] nextProbeNs;
    private final int[] retriesWhenFailed;
    private final long[] silentNsWhenFailed;
    private final long[] lastAckNs;
    private long currentSinceNs;
    private int current;
    private int retries;

    /** @param nowNs the time now: every rail's give-up clock starts here */
    RailSet(int rails, long nowNs) {
        if (rails < 1 || rails > 64) {
            throw new IllegalArgumentException("rails in [1, 64] required but it was " + rails);
        }
        failed = new boolean[rails];
        nextProbeNs = new long[rails];
        retriesWhenFailed = new int[rails];
        silentNsWhenFailed = new long[rails];
        lastAckNs = new long[rails];
        java.util.Arrays.fill(lastAckNs, nowNs);
        currentSinceNs = nowNs;
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

    /** An ACK of any kind came from the peer on {@code rail}: it is there and hears us (restarts the give-up clock). */
    void ackOn(int rail, long nowNs) {
        lastAckNs[rail] = nowNs;
    }

    /** How long the current rail has gone without an ACK (counted from when it became current, if later), ns. */
    long silentNs(long nowNs) {
        long since = lastAckNs[current] - currentSinceNs > 0 ? lastAckNs[current] : currentSinceNs;
        return nowNs - since;
    }

    /** Whether the current rail is to be given up: more than {@code maxRetries} retries and silent for {@code railTimeoutNs}. */
    boolean exhausted(long nowNs, int maxRetries, long railTimeoutNs) {
        return retries > maxRetries && silentNs(nowNs) >= railTimeoutNs;
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
        silentNsWhenFailed[current] = silentNs(nowNs);
        currentSinceNs = nowNs;
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

    /** What each rail did before it failed, for an error message: "rail 0 (8 retries, no ACK for 1000 ms), rail 1 (..)". */
    String describeFailed() {
        List<String> parts = new ArrayList<>();
        for (int r = 0; r < failed.length; r++) {
            if (failed[r]) {
                parts.add("rail " + r + " (" + retriesWhenFailed[r] + " retries, no ACK for " + millis(silentNsWhenFailed[r]) + ")");
            }
        }
        return String.join(", ", parts);
    }

    private static String millis(long ns) {
        return ns >= 10_000_000 ? ns / 1_000_000 + " ms" : String.format(java.util.Locale.ROOT, "%.3f ms", ns / 1e6);
    }
}
