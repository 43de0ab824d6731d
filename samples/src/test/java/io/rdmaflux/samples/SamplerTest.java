package io.rdmaflux.samples;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Sampler} is made before a timed transfer starts (its thread's start-up is not the transfer's) and
 * told when it started: what it sampled before is dropped, and sample times count from the start given.
 * Real threads, every wait bounded.
 */
class SamplerTest {

    @Test
    void samplesBeforeTheStartAreDroppedAndTimesCountFromIt() throws Exception {
        AtomicLong received = new AtomicLong(7);
        CountDownLatch sampledTwice = new CountDownLatch(2);
        try (Sampler sampler = new Sampler(received::get, () -> new long[] {received.get()}, 1, bytes -> sampledTwice.countDown())) {
            assertTrue(sampledTwice.await(20, TimeUnit.SECONDS), "the sampler never sampled");
            received.set(1_000);
            long startNs = System.nanoTime();
            sampler.startAt(startNs);
            long beforeFinishNs = System.nanoTime();
            List<Sampler.Sample> samples = sampler.finish(received::get, () -> new long[] {received.get()});

            assertFalse(samples.isEmpty(), "finish takes a last sample");
            for (Sampler.Sample s : samples) {
                assertTrue(s.timeNs() >= 0 && s.timeNs() <= System.nanoTime() - startNs,
                    "a sample timed " + s.timeNs() + " ns is not counted from the start given");
            }
            Sampler.Sample last = samples.get(samples.size() - 1);
            assertEquals(1_000, last.receivedBytes());
            assertTrue(last.timeNs() >= beforeFinishNs - startNs, "the last sample is timed from the start given");
            // a sample that read 7 was timed before received became 1,000, so before the start: dropped
            for (Sampler.Sample s : samples) {
                assertEquals(1_000, s.receivedBytes(), "a sample taken before the start was kept");
            }
        }
    }
}
