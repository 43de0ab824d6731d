package io.rdmaflux.samples;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * Samples a running transfer every {@code periodMs} on a daemon thread: bytes received and bytes
 * per rail, for the progress bar, the summary and the report.
 */
final class Sampler implements AutoCloseable {
    /** One sample: {@code timeNs} since start, bytes received so far, payload bytes per rail so far. */
    record Sample(long timeNs, long receivedBytes, long[] railBytes) {
    }

    private final List<Sample> samples = new ArrayList<>();
    private final Thread thread;
    private final long startNs = System.nanoTime();
    private volatile boolean running = true;

    Sampler(AtomicLong received, InJvmRails rails, long periodMs, LongConsumer onSample) {
        thread = new Thread(() -> {
            while (running) {
                take(received, rails);
                onSample.accept(received.get());
                try {
                    Thread.sleep(periodMs);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "rdmaflux-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    private void take(AtomicLong received, InJvmRails rails) {
        Sample s = new Sample(System.nanoTime() - startNs, received.get(), rails.railBytes());
        synchronized (samples) {
            samples.add(s);
        }
    }

    /** Stops sampling after one final sample; returns every sample, oldest first. */
    List<Sample> finish(AtomicLong received, InJvmRails rails) {
        close();
        take(received, rails);
        synchronized (samples) {
            return List.copyOf(samples);
        }
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
