package io.rdmaflux.samples;

/**
 * Runs a task every {@code periodMs} on a named daemon thread until {@link #close()}, which stops and
 * joins it (at most 1 s). The sampling threads of the samples (progress, striping weights) share it.
 */
final class PeriodicThread implements AutoCloseable {
    private final Thread thread;
    private volatile boolean running = true;

    PeriodicThread(String name, long periodMs, Runnable task) {
        thread = new Thread(() -> {
            while (running) {
                task.run();
                try {
                    Thread.sleep(periodMs);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
