package io.rdmaflux.core.internal.onesided;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Properties of load balanced fragmentation (seed 002 &sect;3.2) over seeded random loads, lengths and
 * rail masks: the fragments add up to the transfer, only usable rails get bytes, a small transfer goes
 * whole on the least loaded rail, and a large one leaves every rail that got bytes within two granules
 * of the least loaded usable rail (the water level), which on idle rails is an equal split.
 */
class LoadBalancedFragmenterTest {
    private static final long GRANULE = 64;
    private static final long SWITCHOVER = 16 * 1024;

    @Test
    void fragmentsBalanceTheLoadOfEveryUsableRail() {
        Random random = new Random(20261125L);
        for (int trial = 0; trial < 20_000; trial++) {
            int rails = 1 + random.nextInt(6);
            LoadBalancedFragmenter f = new LoadBalancedFragmenter(rails, SWITCHOVER, GRANULE);
            long usable = 0;
            while (usable == 0) {
                usable = random.nextLong() & ((1L << rails) - 1);
            }
            long[] outstanding = new long[rails];
            for (int r = 0; r < rails; r++) {
                outstanding[r] = random.nextInt(4) == 0 ? 0 : random.nextInt(1 << 22);
            }
            long length = 1 + (random.nextBoolean() ? random.nextInt(1 << 24) : random.nextInt((int) SWITCHOVER * 2));
            long[] out = new long[rails];
            long used = f.split(length, usable, outstanding, out);
            String at = "trial " + trial + ": rails=" + rails + " usable=0x" + Long.toHexString(usable) + " length=" + length
                + " outstanding=" + java.util.Arrays.toString(outstanding) + " split=" + java.util.Arrays.toString(out);
            long sum = 0;
            long minLoad = Long.MAX_VALUE;
            for (int r = 0; r < rails; r++) {
                assertTrue(out[r] >= 0, at);
                sum += out[r];
                boolean isUsable = (usable & (1L << r)) != 0;
                if (!isUsable) {
                    assertEquals(0, out[r], at);
                } else {
                    minLoad = Math.min(minLoad, outstanding[r] + out[r]);
                }
                assertEquals(out[r] > 0, (used & (1L << r)) != 0, at);
            }
            assertEquals(length, sum, at);
            if (length < SWITCHOVER) {
                assertEquals(1, Long.bitCount(used), at);
                int rail = Long.numberOfTrailingZeros(used);
                for (int r = 0; r < rails; r++) {
                    if ((usable & (1L << r)) != 0) {
                        assertTrue(outstanding[rail] <= outstanding[r], "the least loaded rail takes a small transfer; " + at);
                    }
                }
                continue;
            }
            for (int r = 0; r < rails; r++) {
                if (out[r] > 0) {
                    assertTrue(outstanding[r] + out[r] - minLoad <= 2 * GRANULE,
                        "rail " + r + " ends " + (outstanding[r] + out[r] - minLoad) + " bytes above the water level; " + at);
                }
            }
        }
    }

    @Test
    void idleRailsGetAnEqualSplit() {
        LoadBalancedFragmenter f = new LoadBalancedFragmenter(4, SWITCHOVER, GRANULE);
        long[] out = new long[4];
        f.split(4 << 20, 0xF, new long[4], out);
        for (long b : out) {
            assertEquals(1 << 20, b);
        }
        f.split(3 << 20, 0b1011, new long[4], out);
        assertEquals(1 << 20, out[0]);
        assertEquals(1 << 20, out[1]);
        assertEquals(0, out[2]);
        assertEquals(1 << 20, out[3]);
    }

    @Test
    void aBusyRailGetsLessAndAFullOneNothing() {
        LoadBalancedFragmenter f = new LoadBalancedFragmenter(2, SWITCHOVER, GRANULE);
        long[] out = new long[2];
        f.split(1 << 20, 0b11, new long[] {1 << 19, 0}, out);
        assertEquals(1 << 18, out[0]);
        assertEquals(3 << 18, out[1]);
        f.split(1 << 20, 0b11, new long[] {4 << 20, 0}, out);
        assertEquals(0, out[0]);
        assertEquals(1 << 20, out[1]);
    }

    @Test
    void smallTransfersTakeTurnsOnIdleRails() {
        LoadBalancedFragmenter f = new LoadBalancedFragmenter(3, SWITCHOVER, GRANULE);
        long[] idle = new long[3];
        StringBuilder rails = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            rails.append(f.leastLoaded(0b111, idle));
        }
        assertEquals("012012", rails.toString());
    }

    @Test
    void badArgumentsAreNamed() {
        assertEquals("railCount in [1, 64] required but it was 0",
            assertThrows(IllegalArgumentException.class, () -> new LoadBalancedFragmenter(0, 1, 1)).getMessage());
        assertEquals("switchoverBytes >= 1 required but it was 0",
            assertThrows(IllegalArgumentException.class, () -> new LoadBalancedFragmenter(1, 0, 1)).getMessage());
        LoadBalancedFragmenter f = new LoadBalancedFragmenter(2, 1, 1);
        assertEquals("lengthBytes > 0 required but it was 0",
            assertThrows(IllegalArgumentException.class, () -> f.split(0, 1, new long[2], new long[2])).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> f.split(10, 0b100, new long[2], new long[2])).getMessage()
            .contains("usable rail"));
    }
}
