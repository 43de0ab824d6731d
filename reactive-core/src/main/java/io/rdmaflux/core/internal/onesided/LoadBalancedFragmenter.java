package io.rdmaflux.core.internal.onesided;

/**
 * Where the bytes of one put or get go, after seed 002 &sect;3.2 ("Scheduling Policies"): below the
 * switchover threshold the whole transfer goes on one rail ("for small messages, we employ round robin
 * policy"; here the rail with the fewest outstanding bytes, round robin among equals, which is round
 * robin on idle rails); from the threshold up, <i>load balanced fragmentation</i>: each usable rail gets
 * the share that brings its outstanding bytes up to one common level L, with
 * {@code sum over rails of max(0, L - outstanding[r]) = length} ("water filling"), rounded to the
 * granule. On idle rails that is an equal split, as the paper says the policy falls back to. One
 * instance per direction (the paper's separate put and get queues), so the puts' balance never counts
 * the gets' bytes.
 *
 * <p>Deviation: the rail-striping module's {@code LoadBalancedStriping} is the same policy for the
 * two-sided stripe engine; reactive-core cannot depend on rail-striping, and one-sided transfers need
 * the per-direction outstanding bytes the engine keeps, so the split lives here as a pure function of
 * them.
 *
 * <p><b>Concurrency:</b> one thread (the progress thread).
 */
final class LoadBalancedFragmenter {
    private final int railCount;
    private final long switchoverBytes;
    private final long granuleBytes;
    private int cursor;

    /**
     * @param switchoverBytes transfers of at least this many bytes are fragmented, &gt;= 1
     * @param granuleBytes    fragment sizes are multiples of this (the last one excepted), &gt;= 1
     * @throws IllegalArgumentException naming the argument out of range
     */
    LoadBalancedFragmenter(int railCount, long switchoverBytes, long granuleBytes) {
        if (railCount < 1 || railCount > 64) {
            throw new IllegalArgumentException("railCount in [1, 64] required but it was " + railCount);
        }
        if (switchoverBytes < 1) {
            throw new IllegalArgumentException("switchoverBytes >= 1 required but it was " + switchoverBytes);
        }
        if (granuleBytes < 1) {
            throw new IllegalArgumentException("granuleBytes >= 1 required but it was " + granuleBytes);
        }
        this.railCount = railCount;
        this.switchoverBytes = switchoverBytes;
        this.granuleBytes = granuleBytes;
        // the first pick on idle rails is rail 0
        this.cursor = railCount - 1;
    }

    /**
     * Fills {@code fragmentBytes[r]} with the bytes of a {@code lengthBytes} transfer rail {@code r} gets.
     *
     * @param usableRails bit r set for each rail that may carry it, not 0
     * @param outstanding bytes of this direction outstanding on each rail now (not changed)
     * @return the mask of rails that got bytes
     * @throws IllegalArgumentException if {@code lengthBytes} is not positive or no rail is usable
     */
    long split(long lengthBytes, long usableRails, long[] outstanding, long[] fragmentBytes) {
        if (lengthBytes <= 0) {
            throw new IllegalArgumentException("lengthBytes > 0 required but it was " + lengthBytes);
        }
        if ((usableRails & mask()) == 0) {
            throw new IllegalArgumentException("at least one usable rail of " + railCount + " required but the mask was 0x"
                + Long.toHexString(usableRails));
        }
        java.util.Arrays.fill(fragmentBytes, 0, railCount, 0);
        if (lengthBytes < switchoverBytes || Long.bitCount(usableRails & mask()) == 1) {
            int rail = leastLoaded(usableRails, outstanding);
            fragmentBytes[rail] = lengthBytes;
            return 1L << rail;
        }
        // the common level L: walk the rails by load, lowest first, until the next one is above L
        int n = 0;
        long[] loads = new long[railCount];
        for (int r = 0; r < railCount; r++) {
            if (usable(usableRails, r)) {
                loads[n++] = outstanding[r];
            }
        }
        java.util.Arrays.sort(loads, 0, n);
        double level = 0;
        long below = 0;
        for (int i = 0; i < n; i++) {
            below += loads[i];
            double candidate = (double) (lengthBytes + below) / (i + 1);
            if (i == n - 1 || candidate <= loads[i + 1]) {
                level = candidate;
                break;
            }
        }
        long assigned = 0;
        for (int r = 0; r < railCount; r++) {
            if (usable(usableRails, r)) {
                long share = (long) Math.max(0, level - outstanding[r]);
                fragmentBytes[r] = Math.min(lengthBytes - assigned, share / granuleBytes * granuleBytes);
                assigned += fragmentBytes[r];
            }
        }
        // what rounding left goes a granule at a time to the rail whose load would stay lowest
        while (assigned < lengthBytes) {
            int pick = -1;
            for (int r = 0; r < railCount; r++) {
                if (usable(usableRails, r) && (pick < 0 || outstanding[r] + fragmentBytes[r] < outstanding[pick] + fragmentBytes[pick])) {
                    pick = r;
                }
            }
            long chunk = Math.min(granuleBytes, lengthBytes - assigned);
            fragmentBytes[pick] += chunk;
            assigned += chunk;
        }
        long used = 0;
        for (int r = 0; r < railCount; r++) {
            if (fragmentBytes[r] > 0) {
                used |= 1L << r;
            }
        }
        return used;
    }

    /** The usable rail with the fewest outstanding bytes, starting the search after the last pick (round robin among equals). */
    int leastLoaded(long usableRails, long[] outstanding) {
        int pick = -1;
        for (int i = 1; i <= railCount; i++) {
            int r = (cursor + i) % railCount;
            if (usable(usableRails, r) && (pick < 0 || outstanding[r] < outstanding[pick])) {
                pick = r;
            }
        }
        if (pick < 0) {
            throw new IllegalArgumentException("no usable rail in mask 0x" + Long.toHexString(usableRails));
        }
        cursor = pick;
        return pick;
    }

    int railCount() {
        return railCount;
    }

    private long mask() {
        return railCount == 64 ? -1L : (1L << railCount) - 1;
    }

    private static boolean usable(long mask, int rail) {
        return (mask & (1L << rail)) != 0;
    }
}
