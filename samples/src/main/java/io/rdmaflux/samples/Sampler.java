package io.rdmaflux.samples;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Samples a running transfer every {@code periodMs} on a daemon thread: bytes received and bytes
 * per rail, for the progress bar, the summary and the report.
 *
 * <p>Made before the transfer starts (its thread costs a few ms to start in a fresh JVM, which a timed run
 * should not pay) and told when the transfer started with {@link #startAt}: samples taken before that are
 * dropped, and sample times count from it. Thread-safe.
 */
final class Sampler implements AutoCloseable {
    /** One sample: {@code timeNs} since start, bytes received so far, payload bytes per rail so far. */
    record Sample(long timeNs, long receivedBytes, long[] railBytes) {
    }

    private final List<Sample> samples = new ArrayList<>();
    private final PeriodicThread thread;
    private volatile long startNs = System.nanoTime();

    /**
     * @param received  bytes done so far (the progress)
     * @param railBytes payload bytes completed per rail so far
     */
    Sampler(LongSupplier received, Supplier<long[]> railBytes, long periodMs, LongConsumer onSample) {
        thread = new PeriodicThread("rdmaflux-sampler", periodMs, () -> {
            take(received, railBytes);
            onSample.accept(received.getAsLong());
        });
    }

    /**
     * The transfer starts at {@code startNs} ({@link System#nanoTime()}): samples taken so far are dropped and
     * later ones are timed from it.
     */
    void startAt(long startNs) {
        synchronized (samples) {
            this.startNs = startNs;
            samples.clear();
        }
    }

    private void take(LongSupplier received, Supplier<long[]> railBytes) {
        long nowNs = System.nanoTime();
        long received0 = received.getAsLong();
        long[] rails = railBytes.get();
        synchronized (samples) {
            if (nowNs - startNs >= 0) {
                samples.add(new Sample(nowNs - startNs, received0, rails));
            }
        }
    }

    /** Stops sampling after one final sample; returns every sample, oldest first. */
    List<Sample> finish(LongSupplier received, Supplier<long[]> railBytes) {
        close();
        take(received, railBytes);
        synchronized (samples) {
            return List.copyOf(samples);
        }
    }

    @Override
    public void close() {
        thread.close();
    }
}
