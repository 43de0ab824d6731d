package io.rdmaflux.samples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * Samples this process's resources every {@code periodMs} ms on its own thread ({@link PeriodicThread})
 * for the soak's leak test ({@link TrendTest}): heap used right after a {@code System.gc()} (bytes; live
 * data, not garbage the collector has not reached yet), off-heap registered bytes (what the soft provider
 * allocated and registered plus the registration cache's bytes), buffers held (received messages not yet
 * released, the buffer pools' occupancy), live threads, and open file descriptors (entries of
 * {@code /proc/self/fd}; -1 where there is no /proc).
 *
 * <p>The GC is forced once per sample, so the heap series is exact at the price of one full collection a
 * second (tens of ms on the soak's small heap); {@code gc=false} samples {@code MemoryMXBean} heap used
 * as is (noisier: garbage included).
 *
 * <p>Thread-safety: {@link #samples()} and {@link #close()} from the owner; the sampling thread appends
 * under the object's lock.
 */
final class ResourceSampler implements AutoCloseable {
    /** The series, in the order of {@link Sample#values()}. */
    static final List<String> SERIES = List.of("heap_bytes", "registered_bytes", "buffers_held", "threads", "fds");

    /** One sample: seconds since start and one value per {@link #SERIES}. */
    record Sample(double timeSec, long[] values) {
    }

    private final long startNs = System.nanoTime();
    private final List<Sample> samples = new ArrayList<>();
    private final LongSupplier registeredBytes;
    private final LongSupplier buffersHeld;
    private final boolean gc;
    private final PeriodicThread thread;

    ResourceSampler(LongSupplier registeredBytes, LongSupplier buffersHeld, long periodMs, boolean gc) {
        this.registeredBytes = registeredBytes;
        this.buffersHeld = buffersHeld;
        this.gc = gc;
        this.thread = new PeriodicThread("rdmaflux-soak-sampler", periodMs, this::take);
    }

    private void take() {
        if (gc) {
            System.gc();
        }
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        long[] v = {heap.getUsed(), registeredBytes.getAsLong(), buffersHeld.getAsLong(),
            ManagementFactory.getThreadMXBean().getThreadCount(), openFds()};
        Sample s = new Sample((System.nanoTime() - startNs) / 1e9, v);
        synchronized (this) {
            samples.add(s);
        }
    }

    /** Entries in /proc/self/fd, or -1 when there is no such directory (not Linux). */
    static long openFds() {
        Path fd = Path.of("/proc/self/fd");
        if (!Files.isDirectory(fd)) {
            return -1;
        }
        try (Stream<Path> s = Files.list(fd)) {
            return s.count() - 1; // the listing's own descriptor
        } catch (IOException e) {
            return -1;
        }
    }

    synchronized List<Sample> samples() {
        return List.copyOf(samples);
    }

    /** Stops sampling (waits for a sample in progress). */
    @Override
    public void close() {
        thread.close();
    }

    /**
     * Writes the samples as CSV ({@code time_s} then one column per {@link #SERIES}).
     *
     * @throws UncheckedIOException if the file cannot be written
     */
    static void writeCsv(Path file, List<Sample> samples) {
        StringBuilder b = new StringBuilder("time_s,").append(String.join(",", SERIES)).append('\n');
        for (Sample s : samples) {
            b.append(String.format(Locale.ROOT, "%.3f", s.timeSec()));
            for (long v : s.values()) {
                b.append(',').append(v);
            }
            b.append('\n');
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(file, b);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the soak samples to " + file, e);
        }
    }

    /**
     * The leak test of every series ({@link TrendTest}, 10 % of the mean relative bound) with these
     * floors: heap 1 MiB, registered 1 MiB, buffers held 64, threads 2, fds 4.
     */
    static List<TrendTest.Result> trends(List<Sample> samples) {
        double[] floors = {1 << 20, 1 << 20, 64, 2, 4};
        double[] t = new double[samples.size()];
        List<TrendTest.Result> out = new ArrayList<>();
        for (int i = 0; i < t.length; i++) {
            t[i] = samples.get(i).timeSec();
        }
        for (int k = 0; k < SERIES.size(); k++) {
            double[] y = new double[t.length];
            for (int i = 0; i < t.length; i++) {
                y[i] = samples.get(i).values()[k];
            }
            out.add(TrendTest.test(t, y, 0.10, floors[k]));
        }
        return out;
    }
}
