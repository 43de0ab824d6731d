package io.rdmaflux.samples;

import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link WeightLog} on its own: the periodic samples, waited for as events rather than expected
 * within a transfer's duration (MainTest checks the log of a real transfer, where only the last
 * sample is certain).
 */
class WeightLogTest {
    @TempDir
    Path dir;

    @Test
    void samplesOnItsOwnThreadWhileOpenAndOnceMoreOnClose() throws Exception {
        VerbsLeakCheck threads = VerbsLeakCheck.begin();
        Path file = dir.resolve("weights.txt");
        Set<String> samplers = ConcurrentHashMap.newKeySet();
        CountDownLatch twoPeriodic = new CountDownLatch(2);
        WeightLog log = new WeightLog(file, "a test", () -> {
            samplers.add(Thread.currentThread().getName());
            twoPeriodic.countDown();
            return new double[] {0.25, 0.75};
        });
        try {
            // the second call begins only after the first sample's line was written, on the same thread
            assertTrue(twoPeriodic.await(30, TimeUnit.SECONDS), "the sampling thread never sampled twice");
        } finally {
            log.close();
        }
        List<String> lines = Files.readAllLines(file);
        assertTrue(lines.get(0).startsWith("# striping weights of a test, every 20 ms"), lines.get(0));
        assertTrue(lines.size() >= 3, "the header, a periodic sample and the last one: " + lines);
        for (String l : lines.subList(1, lines.size())) {
            assertTrue(l.matches("\\d+\\.\\d{6} 0\\.2500 0\\.7500"), l);
        }
        assertEquals(Set.of("rdmaflux-weights", Thread.currentThread().getName()), samplers,
            "periodic samples on the log's thread, the last one on the closing thread");
        threads.assertClean();
    }
}
