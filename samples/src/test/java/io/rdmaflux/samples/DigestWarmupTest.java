package io.rdmaflux.samples;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DigestWarmupTest {
    private static boolean warmupThreadAlive() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals("rdmaflux-digest-warmup") && t.isAlive());
    }

    @Test
    void warmingHashesUntilCompiledOrTheCapAndLeavesNoThread() {
        try (DigestWarmup w = DigestWarmup.start()) {
            w.awaitReady(30_000);
            assertTrue(w.blocks() >= 3, "at least three fast blocks in a row end it, or the cap: " + w.blocks());
            assertTrue(w.blocks() <= DigestWarmup.MAX_BLOCKS, "never more than the cap: " + w.blocks());
        }
        assertFalse(warmupThreadAlive());
    }

    @Test
    void closeStopsWarmingAtOnceAndAwaitIsBounded() {
        DigestWarmup w = DigestWarmup.start();
        long t = System.nanoTime();
        w.awaitReady(1);
        assertTrue(System.nanoTime() - t < 5_000_000_000L, "awaitReady(1 ms) returned after " + (System.nanoTime() - t) + " ns");
        w.close();
        assertFalse(warmupThreadAlive());
        assertTrue(w.blocks() <= DigestWarmup.MAX_BLOCKS);
    }
}
