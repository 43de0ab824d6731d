package io.rdmaflux.core.reorder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ReorderWindowTest {

    @Test
    void startsSmallWhateverTheWindowAndGrowsOnlyWhenAPsnArrivesFartherAhead() {
        ReorderWindow<Integer> w = new ReorderWindow<>(0, 4097);
        assertEquals(ReorderWindow.INITIAL_SLOTS, w.capacity());
        List<Integer> out = new ArrayList<>();
        for (int psn = 0; psn < 10_000; psn++) {
            w.offer(psn, psn, out::add);
        }
        assertEquals(ReorderWindow.INITIAL_SLOTS, w.capacity(), "in-order traffic never grows the ring");
        w.offer(10_000 + 100, -1, out::add);
        assertEquals(128, w.capacity());
        w.offer(10_000 + 4096, -2, out::add);
        assertEquals(8192, w.capacity(), "the window (4097) rounded up to a power of two");
        assertThrows(ReorderWindowOverflowException.class, () -> w.offer(10_000 + 4097, -3, out::add));
    }

    @Test
    void itemsQueuedBeforeAGrowthKeepTheirPsnsAcrossThePsnWrap() {
        int first = Integer.MAX_VALUE - 40;
        ReorderWindow<Integer> w = new ReorderWindow<>(first, 1000);
        List<Integer> out = new ArrayList<>();
        // queued in the 64-slot ring, some past the 32-bit wrap
        for (int d = 1; d < 64; d += 2) {
            w.offer(first + d, d, out::add);
        }
        assertTrue(w.isQueued(first + 61));
        assertFalse(w.isQueued(first + 600), "beyond the ring: not queued, and no alias of a queued PSN");
        w.offer(first + 900, 900, out::add);
        assertTrue(w.capacity() >= 1024);
        for (int d = 1; d < 64; d += 2) {
            assertTrue(w.isQueued(first + d), "PSN at distance " + d + " kept its slot across the growth");
        }
        for (int d = 0; d < 900; d++) {
            if (d < 64 && d % 2 == 1) {
                continue; // queued already
            }
            w.offer(first + d, d, out::add);
        }
        List<Integer> expected = new ArrayList<>();
        for (int d = 0; d <= 900; d++) {
            expected.add(d);
        }
        assertEquals(expected, out);
        assertEquals(0, w.queued());
        assertEquals(first + 901, w.esn());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 63, 64, 65, 700, 5000})
    void anyArrivalOrderWithinTheWindowDeliversEachPsnOnceInOrder(int window) {
        SplittableRandom rnd = new SplittableRandom(window);
        for (int trial = 0; trial < 50; trial++) {
            int first = rnd.nextInt();
            ReorderWindow<Integer> w = new ReorderWindow<>(first, window);
            List<Integer> out = new ArrayList<>();
            int n = 3 * window + 10;
            // a sender that keeps at most `window` PSNs outstanding and whose arrivals are shuffled within that
            List<Integer> inFlight = new ArrayList<>();
            int next = 0;
            while (out.size() < n) {
                while (next < n && next - out.size() < window) {
                    inFlight.add(next++);
                }
                Collections.swap(inFlight, 0, rnd.nextInt(inFlight.size()));
                int d = inFlight.remove(0);
                w.offer(first + d, d, out::add);
            }
            for (int i = 0; i < n; i++) {
                assertEquals(i, out.get(i));
            }
            assertEquals(0, w.queued());
            assertTrue(w.capacity() <= Math.max(ReorderWindow.INITIAL_SLOTS, Integer.highestOneBit(window) * 2));
        }
    }
}
