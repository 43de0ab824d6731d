package io.rdmaflux.samples;

import java.util.Locale;

/**
 * The soak's leak test on one sample series: does it still rise once the run is warm?
 *
 * <p>The test: take the second half of the series (the first half is warm-up: JIT, pools filling,
 * the heap settling), fit {@code y = a + b t} by least squares ({@code t} in s), and call the series
 * rising when the fitted rise over that half, {@code b * (t_last - t_first)}, exceeds
 * {@code max(relative * mean, floor)} where {@code mean} is the half's mean. The relative bound makes
 * it scale-free (10 % of a 40 MiB heap, of 60 threads); the floor keeps small integer series (fds,
 * buffers held) from failing on one unit of noise. A flat noisy series has a fitted rise near 0
 * whatever its noise; a leak of {@code L} per second fails once {@code L * T/2} passes the bound,
 * so longer runs find smaller leaks. A falling series always passes.
 *
 * <p>This is ordinary least-squares trend detection (no seed paper; see e.g. NIST/SEMATECH e-Handbook
 * of Statistical Methods, 4.1.4.1, linear least squares). It deliberately does not use a
 * significance test: a soak wants "no growth of practical size", and a tiny but steady slope is
 * still a leak.
 *
 * <p>Stateless and thread-safe.
 */
final class TrendTest {
    private TrendTest() {
    }

    /**
     * The verdict on one series.
     *
     * @param slopePerSec fitted slope over the second half, units per second
     * @param rise        {@code slopePerSec} times the half's span, units
     * @param mean        the half's mean, units
     * @param bound       {@code max(relative * mean, floor)}, units
     * @param rising      {@code rise > bound}
     */
    record Result(double slopePerSec, double rise, double mean, double bound, boolean rising) {
        String describe(String name) {
            return String.format(Locale.ROOT, "%s: mean %.4g, fitted rise over the second half %+.4g (slope %+.4g/s), bound %.4g -> %s",
                name, mean, rise, slopePerSec, bound, rising ? "RISING (fails)" : "flat");
        }
    }

    /**
     * Tests {@code values[i]} sampled at {@code timesSec[i]} (increasing).
     *
     * @param relative the allowed rise as a fraction of the mean, e.g. 0.1
     * @param floor    the allowed rise in units when the relative bound is smaller
     * @throws IllegalArgumentException if the arrays differ in length or hold fewer than 4 samples
     *                                  (the second half needs 2 to fit a line)
     */
    static Result test(double[] timesSec, double[] values, double relative, double floor) {
        if (timesSec.length != values.length) {
            throw new IllegalArgumentException("times (" + timesSec.length + ") and values (" + values.length + ") differ in length");
        }
        if (values.length < 4) {
            throw new IllegalArgumentException("a trend needs at least 4 samples but there were " + values.length
                + "; run the soak longer (it samples once a second)");
        }
        int from = values.length / 2;
        int n = values.length - from;
        double mt = 0;
        double my = 0;
        for (int i = from; i < values.length; i++) {
            mt += timesSec[i];
            my += values[i];
        }
        mt /= n;
        my /= n;
        double sxy = 0;
        double sxx = 0;
        for (int i = from; i < values.length; i++) {
            double dt = timesSec[i] - mt;
            sxy += dt * (values[i] - my);
            sxx += dt * dt;
        }
        double slope = sxx == 0 ? 0 : sxy / sxx;
        double rise = slope * (timesSec[values.length - 1] - timesSec[from]);
        double bound = Math.max(relative * Math.abs(my), floor);
        return new Result(slope, rise, my, bound, rise > bound);
    }
}
