package io.rdmaflux.samples;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PeriodicThread#close()} returns only after a run in progress finished, so a caller's last
 * sample comes after every periodic one (before, close gave up after 1 s and a periodic sample held off
 * the CPU could land after the last one, or be lost). Real threads, every wait bounded; 1.5 s of it
 * is the window in which close must not return.
 */
class PeriodicThreadTest {

    @Test
    void closeWaitsForTheRunInProgressAndNoRunStartsAfterIt() throws Exception {
        CountDownLatch inRun = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        AtomicBoolean runFinished = new AtomicBoolean();
        PeriodicThread periodic = new PeriodicThread("rdmaflux-periodic-test", 1, () -> {
            runs.incrementAndGet();
            inRun.countDown();
            // a run that close's interrupt does not end, like one held off the CPU
            boolean interrupted = false;
            while (release.getCount() > 0) {
                try {
                    release.await(20, TimeUnit.SECONDS);
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            runFinished.set(true);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        });
        AtomicBoolean finishedWhenCloseReturned = new AtomicBoolean();
        Thread closer = new Thread(() -> {
            periodic.close();
            finishedWhenCloseReturned.set(runFinished.get());
        }, "closer");
        try {
            assertTrue(inRun.await(20, TimeUnit.SECONDS), "the task never ran");
            closer.start();
            // longer than the 1 s the old close waited before giving up: a close that gives up is caught here
            closer.join(1_500);
            assertTrue(closer.isAlive(), "close returned while the run was still in progress");
        } finally {
            release.countDown();
            closer.join(20_000);
        }
        assertFalse(closer.isAlive(), "close never returned");
        assertTrue(finishedWhenCloseReturned.get(), "close returned before the run in progress finished");
        int after = runs.get();
        periodic.close();
        assertEquals(1, after, "one run: the one in progress when close was called");
        assertEquals(after, runs.get(), "no run after close");
    }

    @Test
    void aRunThatThrowsDoesNotStopTheNextRuns() throws Exception {
        CountDownLatch threeRuns = new CountDownLatch(3);
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try (PeriodicThread periodic = new PeriodicThread("rdmaflux-periodic-throws", 1, () -> {
            threeRuns.countDown();
            throw new IllegalStateException("sampler broke");
        })) {
            assertTrue(threeRuns.await(20, TimeUnit.SECONDS), "runs stopped after the first one threw");
        } finally {
            System.setErr(err);
        }
        assertTrue(captured.toString(java.nio.charset.StandardCharsets.UTF_8)
            .contains("rdmaflux: the rdmaflux-periodic-throws thread's run failed: java.lang.IllegalStateException: sampler broke"), captured::toString);
    }
}
