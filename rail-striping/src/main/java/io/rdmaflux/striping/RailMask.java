package io.rdmaflux.striping;

/**
 * Helpers for the {@code long} bit mask of rails a policy may use: bit {@code i} set means rail
 * {@code i} is usable. A virtual channel therefore holds at most {@value #MAX_RAILS} rails, which
 * is far above what a host carries (seed 000 §3: two to four HCA ports).
 */
public final class RailMask {
    /** Largest number of rails of one virtual channel. */
    public static final int MAX_RAILS = 64;

    private RailMask() {
    }

    /** A mask with rails {@code 0 .. railCount-1} set. */
    public static long all(int railCount) {
        checkRailCount(railCount);
        return railCount == MAX_RAILS ? -1L : (1L << railCount) - 1;
    }

    /** Whether {@code rail} is set in {@code mask}. */
    public static boolean contains(long mask, int rail) {
        return (mask & (1L << rail)) != 0;
    }

    /** Number of rails set. */
    public static int count(long mask) {
        return Long.bitCount(mask);
    }

    /**
     * Checks a rail count given by a caller.
     *
     * @throws IllegalArgumentException unless {@code 1 <= railCount <= 64}
     */
    public static int checkRailCount(int railCount) {
        if (railCount < 1 || railCount > MAX_RAILS) {
            throw new IllegalArgumentException("railCount in [1, " + MAX_RAILS + "] required but it was "
                + railCount + "; a virtual channel needs at least one rail");
        }
        return railCount;
    }
}
