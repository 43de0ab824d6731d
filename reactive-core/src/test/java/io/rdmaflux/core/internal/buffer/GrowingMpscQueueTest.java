package io.rdmaflux.core.internal.buffer;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GrowingMpscQueueTest {
    @Test
    void startsSmallDoublesWhenFullAndLosesNothing() {
        GrowingMpscQueue<Integer> q = new GrowingMpscQueue<>(4, 100);
        assertEquals(4, q.capacity());
        for (int i = 0; i < 3; i++) {
            assertTrue(q.offer(i));
            assertEquals(i, q.poll());
        }
        assertEquals(4, q.capacity(), "no growth while few elements wait");
        for (int i = 0; i < 100; i++) {
            assertTrue(q.offer(i));
        }
        // 4 + 8 + 16 + 32 wait in the queues it outgrew, 40 in the current one
        assertEquals(64, q.capacity(), "doubled while elements kept arriving");
        Set<Integer> got = new HashSet<>();
        Integer e;
        while ((e = q.poll()) != null) {
            got.add(e);
        }
        assertEquals(100, got.size());
        assertNull(q.poll());
    }

    @Test
    void refusesOnlyOnceTheLargestQueueIsFull() {
        GrowingMpscQueue<Integer> q = new GrowingMpscQueue<>(2, 4);
        for (int i = 0; i < 6; i++) {
            assertTrue(q.offer(i), "element " + i);
        }
        assertEquals(4, q.capacity());
        assertFalse(q.offer(6));
        Set<Integer> got = new HashSet<>();
        for (int i = 0; i < 6; i++) {
            got.add(q.poll());
        }
        assertEquals(Set.of(0, 1, 2, 3, 4, 5), got, "the current queue and the ones it outgrew are drained");
        assertNull(q.poll());
    }

    @Test
    void producersOnOtherThreadsGrowingItLoseNothing() throws InterruptedException {
        GrowingMpscQueue<Integer> q = new GrowingMpscQueue<>(2, 1 << 16);
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int base = t * 10_000;
            Thread th = new Thread(() -> {
                for (int i = 0; i < 10_000; i++) {
                    q.offer(base + i);
                }
            }, "growing-mpsc-producer-" + t);
            producers.add(th);
            th.start();
        }
        for (Thread th : producers) {
            th.join();
        }
        Set<Integer> got = new HashSet<>();
        Integer e;
        while ((e = q.poll()) != null) {
            got.add(e);
        }
        assertEquals(40_000, got.size(), "every element offered was polled once");
    }

    @Test
    void badCapacitiesNameTheValues() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new GrowingMpscQueue<>(8, 4));
        assertTrue(e.getMessage().contains("8") && e.getMessage().contains("4"), e.getMessage());
    }
}
