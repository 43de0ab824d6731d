package io.rdmaflux.benchmarks;

import org.HdrHistogram.Histogram;

/**
 * One side of a ping-pong comparison probe (e.g. {@code NetPingPongRatio}, {@code UcxPingPongRatio}):
 * opened, driven one round trip at a time on the caller's thread, closed. {@link #record} is how every
 * probe measures a side, so the sides of one comparison are timed the same way.
 */
public interface RoundTripSide {
    void open() throws Exception;

    /** One ping and its pong, returning when the pong is back. */
    void roundTrip() throws Exception;

    void close() throws Exception;

    /**
     * Opens {@code side}, warms it for a quarter of {@code measureNs}, records each round trip in ns into
     * {@code h} for {@code measureNs} of real time, and closes it (also on failure).
     */
    static void record(RoundTripSide side, Histogram h, long measureNs) throws Exception {
        side.open();
        try {
            long warmEnd = System.nanoTime() + measureNs / 4;
            while (System.nanoTime() - warmEnd < 0) {
                side.roundTrip();
            }
            long end = System.nanoTime() + measureNs;
            long t0 = System.nanoTime();
            while (t0 - end < 0) {
                side.roundTrip();
                long t1 = System.nanoTime();
                h.recordValue(t1 - t0);
                t0 = t1;
            }
        } finally {
            side.close();
        }
    }
}
