package io.rdmaflux.striping;

import java.time.Duration;
import java.util.Arrays;

/**
 * Factories of the striping policies: even, weighted and adaptive (seed 000 §4.4–4.5) and sampled
 * (seed 004 §II–III). Each factory creates a fresh policy per virtual channel.
 */
public final class StripingPolicies {
    /** α used by {@link #adaptive()}: half history, half the latest measurement. */
    public static final double DEFAULT_ALPHA = 0.5;
    /**
     * Busy time over which {@link #adaptive()} averages each rail's measured rate before eq. 4 of
     * seed 000 uses it: 20 ms. Stripe times are taken when completions are polled; a progress thread
     * held up for a few ms (a shared, busy CPU) finds a burst of completions at once, so one stripe
     * per rail carries the whole delay and the stripes found with it get no time (censored). Taken
     * message by message, those times swung the weights of 400 + 100 MB/s rails between 0.5 and 0.9
     * (real time, progress thread at half a core); skipping censored messages kept exactly the
     * stripes that carry the delay and pulled the weights towards even. Averaged over the rail's
     * busy time, a delayed completion and the stripes found with it count together (bytes over the
     * time they took), and the weights stayed within 0.79–0.81. 20 ms spans a few scheduler time
     * slices and keeps the re-convergence after a capacity change far below 0.5 s.
     */
    public static final Duration DEFAULT_RATE_WINDOW = Duration.ofMillis(20);
    /** Smallest weight {@link #adaptive()} leaves a rail, as a fraction of the total. */
    public static final double DEFAULT_MIN_SHARE = 0.02;
    /** How far {@link #sampled} moves a model towards each live measurement. */
    public static final double DEFAULT_SAMPLE_GAIN = 0.25;

    private StripingPolicies() {
    }

    /** Equal stripes on every usable rail. */
    public static StripingPolicy.Factory even() {
        return EvenStriping::new;
    }

    /**
     * Stripes in proportion to fixed {@code weights}, one per rail (e.g. link bandwidths).
     *
     * @throws IllegalArgumentException (at {@code create}) unless there is one finite weight
     *                                  {@code >= 0} per rail and one is {@code > 0}
     */
    public static StripingPolicy.Factory weighted(double... weights) {
        double[] copy = weights.clone();
        return (railCount, granule) -> new WeightedStriping(railCount, granule, copy);
    }

    /**
     * Load-balanced fragmentation (seed 002 §3.2): fragments equalize each rail's outstanding bytes;
     * with idle rails an equal split. Use one instance per direction (puts and gets).
     */
    public static StripingPolicy.Factory loadBalanced() {
        return LoadBalancedStriping::new;
    }

    /**
     * Adaptive striping with {@link #DEFAULT_ALPHA}, starting from the rails' advertised rates where every
     * rail advertises one ({@link StripingPolicy#advertisedRates}), else from equal weights.
     */
    public static StripingPolicy.Factory adaptive() {
        return adaptive(DEFAULT_ALPHA);
    }

    /**
     * Adaptive striping (seed 000 eq. 4), starting from the rails' advertised rates where every rail
     * advertises one ({@link StripingPolicy#advertisedRates}), else from equal weights.
     *
     * @param alpha history factor in (0, 1]: the share of the newest measurement in each update
     * @throws IllegalArgumentException if {@code alpha} is outside (0, 1]
     */
    public static StripingPolicy.Factory adaptive(double alpha) {
        checkAlpha(alpha);
        return (railCount, granule) -> {
            double[] equal = new double[railCount];
            Arrays.fill(equal, 1.0);
            return new AdaptiveStriping(railCount, granule, alpha, DEFAULT_RATE_WINDOW.toNanos(), DEFAULT_MIN_SHARE, equal, true);
        };
    }

    /**
     * Adaptive striping starting from {@code initialWeights}, with a floor of {@code minShare} of
     * the total weight per usable rail so that a slowed rail keeps being probed.
     *
     * @throws IllegalArgumentException if {@code alpha} is outside (0, 1], or (at {@code create})
     *                                  {@code minShare} is outside [0, 1/railCount) or the weights do
     *                                  not fit the rails
     */
    public static StripingPolicy.Factory adaptive(double alpha, double minShare, double... initialWeights) {
        checkAlpha(alpha);
        double[] copy = initialWeights.clone();
        return (railCount, granule) -> new AdaptiveStriping(railCount, granule, alpha, DEFAULT_RATE_WINDOW.toNanos(), minShare, copy);
    }

    /**
     * Adaptive striping with an explicit rate window.
     *
     * @param rateWindow the busy time over which each rail's rate (bytes of its stripes over their
     *                   delivery times) is averaged before eq. 4 uses it; {@link Duration#ZERO} takes
     *                   each message's own stripe times, exactly as seed 000 eq. 1–4 print it (and
     *                   skips censored messages). See {@link #DEFAULT_RATE_WINDOW} for why a window.
     * @throws IllegalArgumentException if {@code alpha} is outside (0, 1] or {@code rateWindow} is
     *                                  negative, or (at {@code create}) {@code minShare} is outside
     *                                  [0, 1/railCount) or the weights do not fit the rails
     */
    public static StripingPolicy.Factory adaptive(double alpha, Duration rateWindow, double minShare, double... initialWeights) {
        checkAlpha(alpha);
        if (rateWindow.isNegative()) {
            throw new IllegalArgumentException("rateWindow >= 0 required but it was " + rateWindow
                + "; Duration.ZERO uses each message's own stripe times");
        }
        long windowNs = rateWindow.toNanos();
        double[] copy = initialWeights.clone();
        return (railCount, granule) -> new AdaptiveStriping(railCount, granule, alpha, windowNs, minShare, copy);
    }

    /**
     * Sampled striping (seed 004) with one transfer-time model per rail, updated from live
     * completions with {@link #DEFAULT_SAMPLE_GAIN}.
     */
    public static StripingPolicy.Factory sampled(TransferTimeModel... models) {
        return sampled(DEFAULT_SAMPLE_GAIN, models);
    }

    /**
     * Sampled striping with a given live-update gain (0 freezes the start-up samples, as the
     * paper does).
     *
     * @throws IllegalArgumentException (at {@code create}) unless there is one model per rail and
     *                                  {@code gain} is in [0, 1]
     */
    public static StripingPolicy.Factory sampled(double gain, TransferTimeModel... models) {
        TransferTimeModel[] copy = models.clone();
        return (railCount, granule) -> new SampledStriping(railCount, granule, copy, gain);
    }

    static void checkAlpha(double alpha) {
        if (!(alpha > 0 && alpha <= 1)) {
            throw new IllegalArgumentException("alpha in (0, 1] required but it was " + alpha
                + "; seed 000 eq. 4 keeps (1 - alpha) of the previous weight");
        }
    }

    static long checkGranule(long granuleBytes) {
        if (granuleBytes < 1) {
            throw new IllegalArgumentException("stripeGranuleBytes >= 1 required but it was " + granuleBytes);
        }
        return granuleBytes;
    }

    static double[] checkWeights(int railCount, double[] weights) {
        if (weights.length != railCount) {
            throw new IllegalArgumentException("one weight per rail required: " + railCount + " rails but "
                + weights.length + " weights " + Arrays.toString(weights));
        }
        double sum = 0;
        for (double w : weights) {
            if (!(w >= 0) || Double.isInfinite(w)) {
                throw new IllegalArgumentException("finite weights >= 0 required but they were " + Arrays.toString(weights));
            }
            sum += w;
        }
        if (sum <= 0) {
            throw new IllegalArgumentException("at least one weight > 0 required but they were " + Arrays.toString(weights));
        }
        return weights.clone();
    }
}
