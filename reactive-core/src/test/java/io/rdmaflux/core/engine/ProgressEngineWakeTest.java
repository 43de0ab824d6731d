package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.ThreadingMode;
import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ProgressEngine#wake()} reaches a DEDICATED thread blocked in its {@link IdleWait}: the wait
 * here lasts an hour unless woken, so a task handed in without a working wake-up fails the bound.
 */
class ProgressEngineWakeTest {
    private static final long HOUR_NS = TimeUnit.HOURS.toNanos(1);
    private static final long BOUND_MS = 30_000;

    /** Selector-like: a wakeup before the wait leaves a permit; {@link #release()} ends waiting for good. */
    private static final class HourWait implements IdleWait {
        final Semaphore permits = new Semaphore(0);
        final AtomicInteger awaits = new AtomicInteger();
        volatile boolean released;

        @Override
        public boolean await(long timeoutNs) {
            awaits.incrementAndGet();
            if (!released) {
                try {
                    permits.tryAcquire(timeoutNs, TimeUnit.NANOSECONDS);
                    permits.drainPermits();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return true;
        }

        @Override
        public void wakeup() {
            permits.release();
        }

        void release() {
            released = true;
            permits.release();
        }
    }

    @Test
    void tasksHandedToAnEngineBlockedInItsWaitRunAtOnce() throws Exception {
        HourWait wait = new HourWait();
        ProgressIdleStrategy idle = new ProgressIdleStrategy(0, 0, HOUR_NS, HOUR_NS).withWait(wait);
        AtomicReference<Throwable> errors = new AtomicReference<>();
        ProgressEngine engine = new ProgressEngine("wake-test", ThreadingMode.DEDICATED, SystemNanoClock.INSTANCE, idle, errors::set);
        Thread progress = null;
        try {
            assertSame(idle, engine.idleStrategy(), "a ProgressIdleStrategy is used as it is, not wrapped");
            for (int i = 0; i < 200; i++) {
                // hand the task in once the thread is armed: it blocks (or is about to) for an hour
                long armedBy = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BOUND_MS);
                while (!idle.isArmed()) {
                    assertTrue(System.nanoTime() - armedBy < 0, "the engine never went idle");
                    Thread.onSpinWait();
                }
                CompletableFuture<Thread> ran = new CompletableFuture<>();
                engine.execute(() -> ran.complete(Thread.currentThread()));
                engine.wake();
                progress = ran.get(BOUND_MS, TimeUnit.MILLISECONDS);
            }
            assertEquals("rdmaflux-progress-wake-test", progress.getName());
            assertTrue(wait.awaits.get() > 0, "the engine blocked in its wait between tasks (otherwise nothing was tested)");
        } finally {
            wait.release();
            engine.close();
        }
        assertNull(errors.get());
        if (progress != null) {
            progress.join(BOUND_MS);
            assertFalse(progress.isAlive(), "the progress thread stops on close");
        }
    }
}
