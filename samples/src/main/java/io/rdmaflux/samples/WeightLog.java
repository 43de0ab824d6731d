package io.rdmaflux.samples;

import org.jspecify.annotations.Nullable;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Writes a connection's striping weights (one share per rail, from
 * {@code RailsChannelFactory.weights(connection)}) to a text file every {@link #PERIOD_MS} while a
 * transfer runs, so a plot or a script can follow adaptive striping (seed 000 §4.5, Fig. 20) next to
 * other clocks: a header line starting with {@code #}, then one line per sample,
 * {@code <epoch seconds, 6 decimals> <share rail 1> <share rail 2> ...}. Wall-clock epoch time (not
 * the JVM's nanoTime) so the samples line up with, for instance, a shell's {@code $EPOCHREALTIME}
 * or a {@code tc} change made by another process.
 *
 * <p><b>Threads:</b> one daemon thread, {@code rdmaflux-weights}, reads the weights (they may lag the
 * progress thread by one update) and writes; {@link #close()} stops and joins it, writes a last
 * sample and closes the file.
 */
final class WeightLog implements AutoCloseable {
    /** Sampling period, ms: finer than the 50-100 ms a capacity change takes to show in the weights. */
    static final long PERIOD_MS = 20;

    private final Path file;
    private final BufferedWriter out;
    private final Supplier<double[]> weights;
    private final PeriodicThread thread;
    private volatile @Nullable IOException failed;

    /**
     * Creates (or truncates) {@code file}, writes the header and starts sampling.
     *
     * @param what    names the weights in the header, e.g. {@code pipeline --connect ..., policy adaptive}
     * @param weights the current weights, one share per rail
     * @throws UserError if {@code file} cannot be written
     */
    WeightLog(Path file, String what, Supplier<double[]> weights) {
        this.file = file;
        this.weights = weights;
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
            out.write("# striping weights of " + what + ", every " + PERIOD_MS + " ms: epoch_s share_rail1 share_rail2 ...\n");
        } catch (IOException e) {
            throw new UserError("cannot write --weights-out " + file + ": " + e + "; give a writable file path", e);
        }
        thread = new PeriodicThread("rdmaflux-weights", PERIOD_MS, this::sample);
    }

    private void sample() {
        if (failed != null) {
            // a write failed: close() reports it; nothing more is written
            return;
        }
        double[] w = weights.get();
        Instant now = Instant.now();
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%d.%06d", now.getEpochSecond(), now.getNano() / 1000));
        for (double share : w) {
            line.append(String.format(Locale.ROOT, " %.4f", share));
        }
        line.append('\n');
        try {
            synchronized (out) {
                out.write(line.toString());
            }
        } catch (IOException e) {
            failed = e;
        }
    }

    /**
     * Stops sampling after one last sample and closes the file.
     *
     * @throws UserError if a write failed
     */
    @Override
    public void close() {
        thread.close();
        if (failed == null) {
            sample();
        }
        try {
            synchronized (out) {
                out.close();
            }
        } catch (IOException e) {
            failed = failed != null ? failed : e;
        }
        IOException f = failed;
        if (f != null) {
            throw new UserError("cannot write --weights-out " + file + ": " + f + "; give a writable file path", f);
        }
    }
}
