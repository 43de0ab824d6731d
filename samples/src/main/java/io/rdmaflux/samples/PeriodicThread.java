package io.rdmaflux.samples;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task every {@code periodMs} ms (fixed delay, the first run at once) on one named daemon thread
 * of a {@link ScheduledExecutorService} until {@link #close()}. The sampling threads of the samples
 * (progress, striping weights) share it.
 *
 * <p>A run that throws is reported on {@code System.err} and the next runs go on.
 * {@link #close()} returns only once a run in progress has finished, so what the caller does after
 * it (a last sample) comes after every periodic one. Not thread-safe: one owner starts and closes it.
 */
final class PeriodicThread implements AutoCloseable {
    /** How long, in s, close waits for a run in progress before it interrupts the thread. */
    private static final long CLOSE_WAIT_S = 30;

    private final String name;
    private final ScheduledThreadPoolExecutor executor;

    PeriodicThread(String name, long periodMs, Runnable task) {
        this.name = name;
        this.executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        executor.scheduleWithFixedDelay(() -> {
            try {
                task.run();
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) {
                // a periodic task that throws would be cancelled silently: say so and keep sampling
                System.err.println("rdmaflux: the " + name + " thread's run failed: " + e);
            }
        }, 0, periodMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Stops the runs and waits for one in progress to finish (up to {@value #CLOSE_WAIT_S} s; then the
     * thread is interrupted and a line on {@code System.err} says so). Idempotent.
     */
    @Override
    public void close() {
        executor.shutdown();
        try {
            if (!executor.awaitTermination(CLOSE_WAIT_S, TimeUnit.SECONDS)) {
                executor.shutdownNow();
                System.err.println("rdmaflux: the " + name + " thread was still in a run " + CLOSE_WAIT_S + " s after close; interrupted it");
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
