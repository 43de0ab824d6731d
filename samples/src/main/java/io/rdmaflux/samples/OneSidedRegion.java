package io.rdmaflux.samples;

import org.jspecify.annotations.Nullable;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Locale;

/**
 * The memory a one-sided benchmark run uses ({@link ConnectionOneSidedBench}, {@link ConnectionOneSidedPeer},
 * {@link PutGetBench}): the region's size for the sizes and window asked for, and the byte pattern that
 * verifies what the transfers moved.
 *
 * <p>Transfer {@code j} of a window goes to offset {@code (j mod slots) x size} of both regions, with
 * {@code slots = min(window, max(1, 64 MiB / largest size))}, so the regions stay at most 64 MiB (or one
 * largest size).
 */
final class OneSidedRegion {
    static final long MAX_REGION_BYTES = 64L << 20;

    private OneSidedRegion() {
    }

    /** Bytes of the region both ends register for {@code sizes} and {@code window}. */
    static long regionBytes(List<Integer> sizes, int window) {
        int max = sizes.stream().mapToInt(Integer::intValue).max().orElse(1);
        return (long) slots(max, window) * max;
    }

    private static int slots(int maxSize, int window) {
        return (int) Math.min(window, Math.max(1, MAX_REGION_BYTES / maxSize));
    }

    /**
     * The bytes both ends agree on: byte {@code i} is byte {@code i & 7} (little-endian) of the
     * 64-bit word {@code (i >>> 3) * 0x9E3779B97F4A7C15}, a pattern in which every 8-byte word
     * differs, so a transfer to the wrong offset shows.
     */
    static final class Pattern {
        private static final long GOLDEN = 0x9E3779B97F4A7C15L;

        private Pattern() {
        }

        static void fill(ByteBuffer b, long bytes) {
            ByteBuffer le = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            int words = (int) (bytes >>> 3);
            for (int w = 0; w < words; w++) {
                le.putLong(w << 3, w * GOLDEN);
            }
            for (long i = (long) words << 3; i < bytes; i++) {
                le.put((int) i, expected(i));
            }
        }

        static byte expected(long i) {
            return (byte) (((i >>> 3) * GOLDEN) >>> ((i & 7) * 8));
        }

        /** @return null if {@code [0, bytes)} of {@code b} is the pattern, else where it differs */
        static @Nullable String compare(ByteBuffer b, long bytes) {
            ByteBuffer le = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            int words = (int) (bytes >>> 3);
            for (int w = 0; w < words; w++) {
                if (le.getLong(w << 3) != w * GOLDEN) {
                    return firstDifference(le, (long) w << 3, Math.min(bytes, ((long) w << 3) + 8));
                }
            }
            return firstDifference(le, (long) words << 3, bytes);
        }

        private static @Nullable String firstDifference(ByteBuffer le, long from, long to) {
            for (long i = from; i < to; i++) {
                if (le.get((int) i) != expected(i)) {
                    return String.format(Locale.ROOT, "byte %d is 0x%02x but 0x%02x was expected", i, le.get((int) i), expected(i));
                }
            }
            return null;
        }
    }
}
