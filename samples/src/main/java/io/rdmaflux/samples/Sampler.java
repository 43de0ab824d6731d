package io.rdmaflux.samples;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Samples a running transfer every {@code periodMs} on a daemon thread: bytes received and bytes
 * per rail, for the progress bar, the summary and the report.
 */
final class Sampler implements AutoCloseable {
    /** One sample: {@code timeNs} since start, bytes received so far, payload bytes per rail so far. */
    record Sample(long timeNs, long receivedBytes, long[] railBytes) {
    }

    private final List<Sample> samples = new ArrayList<>();
    private final PeriodicThread thread;
    private final long startNs = System.nanoTime();

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

    private void take(LongSupplier received, Supplier<long[]> railBytes) {
        Sample s = new Sample(System.nanoTime() - startNs, received.getAsLong(), railBytes.get());
        synchronized (samples) {
            samples.add(s);
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
