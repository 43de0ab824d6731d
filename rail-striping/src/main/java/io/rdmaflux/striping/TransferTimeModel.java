package io.rdmaflux.striping;

import java.util.function.LongUnaryOperator;

/**
 * Predicted transfer time of one rail as a function of message size, seed 004 §III-C (Brunet et
 * al., NewMadeleine): samples at powers of two, the two samples around a size found with a
 * logarithm, linear interpolation between them. Above the largest sample the last segment is
 * extended; below the smallest the smallest sample is used.
 *
 * <p>Samples are kept non-decreasing in size (a larger transfer never takes less time), which
 * makes {@link #maxBytesWithin} the exact inverse of {@link #predictNs}.
 *
 * <p>{@link #observe} folds a measured transfer into the two samples around its size, so the
 * model follows the rail at run time (the paper samples once at start-up; rails whose capacity
 * changes need the live update).
 *
 * <p><b>Concurrency:</b> not thread-safe; owned by one {@link StripingPolicy}. {@link #copy()}
 * gives an independent model, so one profile can seed many virtual channels.
 */
public final class TransferTimeModel {
    private final int minLog2;
    private final double[] sampleNs;

    private TransferTimeModel(int minLog2, double[] sampleNs) {
        this.minLog2 = minLog2;
        this.sampleNs = sampleNs;
        enforceMonotone();
    }

    /**
     * A model from measured samples: {@code samplesNs[j]} is the transfer time of
     * {@code 2^(minLog2 + j)} bytes.
     *
     * @throws IllegalArgumentException if there are fewer than 2 samples, a sample is not a
     *                                  positive finite number, or the sizes leave [1 B, 2^62 B]
     */
    public static TransferTimeModel ofSamples(int minLog2, double[] samplesNs) {
        if (samplesNs.length < 2) {
            throw new IllegalArgumentException("at least 2 samples required but there were " + samplesNs.length);
        }
        if (minLog2 < 0 || minLog2 + samplesNs.length - 1 > 62) {
            throw new IllegalArgumentException("sample sizes 2^" + minLog2 + " .. 2^" + (minLog2 + samplesNs.length - 1)
                + " must lie within 2^0 .. 2^62");
        }
        for (int j = 0; j < samplesNs.length; j++) {
            if (!(samplesNs[j] > 0) || Double.isInfinite(samplesNs[j])) {
                throw new IllegalArgumentException("sample " + j + " (2^" + (minLog2 + j) + " bytes) must be > 0 ns but it was "
                    + samplesNs[j]);
            }
        }
        return new TransferTimeModel(minLog2, samplesNs.clone());
    }

    /**
     * Runs the start-up sampling of seed 004 §III-C: {@code probe} returns the measured transfer
     * time in ns of a message of the given size, called for every power of two from
     * {@code 2^minLog2} to {@code 2^maxLog2}.
     */
    public static TransferTimeModel sample(int minLog2, int maxLog2, LongUnaryOperator probe) {
        if (maxLog2 <= minLog2) {
            throw new IllegalArgumentException("maxLog2 > minLog2 required but they were " + maxLog2 + " and " + minLog2);
        }
        double[] s = new double[maxLog2 - minLog2 + 1];
        for (int j = 0; j < s.length; j++) {
            s[j] = probe.applyAsLong(1L << (minLog2 + j));
        }
        return ofSamples(minLog2, s);
    }

    /**
     * A model from nominal figures (a port's advertised bandwidth and one-way latency), used
     * before any sample exists: {@code 2 * latency + size / bandwidth} (the completion of a
     * signaled RC work request needs the acknowledgement back).
     */
    public static TransferTimeModel nominal(long bandwidthBytesPerSec, long oneWayLatencyNs) {
        if (bandwidthBytesPerSec <= 0) {
            throw new IllegalArgumentException("bandwidthBytesPerSec > 0 required but it was " + bandwidthBytesPerSec);
        }
        if (oneWayLatencyNs < 0) {
            throw new IllegalArgumentException("oneWayLatencyNs >= 0 required but it was " + oneWayLatencyNs);
        }
        return sample(0, 32, size -> Math.max(1, 2 * oneWayLatencyNs + size * 1_000_000_000L / bandwidthBytesPerSec));
    }

    /** Predicted transfer time in ns of {@code sizeBytes} bytes. */
    public double predictNs(long sizeBytes) {
        if (sizeBytes <= (1L << minLog2)) {
            return sampleNs[0];
        }
        int k = 63 - Long.numberOfLeadingZeros(sizeBytes);
        int j = Math.min(k - minLog2, sampleNs.length - 2);
        long base = 1L << (minLog2 + j);
        double fraction = (double) (sizeBytes - base) / base;
        return sampleNs[j] + fraction * (sampleNs[j + 1] - sampleNs[j]);
    }

    /** Largest size in bytes whose predicted time is at most {@code budgetNs}; 0 if none. */
    public long maxBytesWithin(double budgetNs) {
        if (budgetNs < sampleNs[0]) {
            return 0;
        }
        int last = sampleNs.length - 1;
        for (int j = 0; j < last; j++) {
            if (budgetNs < sampleNs[j + 1]) {
                return bytesOnSegment(j, budgetNs);
            }
        }
        return bytesOnSegment(last - 1, budgetNs);
    }

    private long bytesOnSegment(int j, double budgetNs) {
        long base = 1L << (minLog2 + j);
        double rise = sampleNs[j + 1] - sampleNs[j];
        if (rise <= 0) {
            return base << 1;
        }
        double bytes = base + (budgetNs - sampleNs[j]) / rise * base;
        return bytes >= Long.MAX_VALUE / 2 ? Long.MAX_VALUE / 2 : (long) bytes;
    }

    /**
     * Folds one measured transfer into the model: the two samples around {@code sizeBytes} move
     * towards the measurement by {@code gain}, in proportion to how close the size is to each.
     *
     * @param gain in (0, 1]; 1 trusts the latest measurement fully
     */
    public void observe(long sizeBytes, double measuredNs, double gain) {
        if (sizeBytes <= 0 || !(measuredNs > 0)) {
            return;
        }
        double predicted = predictNs(sizeBytes);
        double error = measuredNs / predicted - 1;
        int j;
        double fraction;
        if (sizeBytes <= (1L << minLog2)) {
            j = 0;
            fraction = 0;
        } else {
            int k = 63 - Long.numberOfLeadingZeros(sizeBytes);
            j = Math.min(k - minLog2, sampleNs.length - 2);
            long base = 1L << (minLog2 + j);
            fraction = Math.min(1.0, (double) (sizeBytes - base) / base);
        }
        sampleNs[j] *= 1 + gain * (1 - fraction) * error;
        sampleNs[j + 1] *= 1 + gain * fraction * error;
        enforceMonotone();
    }

    private void enforceMonotone() {
        for (int j = 1; j < sampleNs.length; j++) {
            if (sampleNs[j] < sampleNs[j - 1]) {
                sampleNs[j] = sampleNs[j - 1];
            }
        }
    }

    /** An independent copy. */
    public TransferTimeModel copy() {
        return new TransferTimeModel(minLog2, sampleNs.clone());
    }

    @Override
    public String toString() {
        return "TransferTimeModel{2^" + minLog2 + ".." + "2^" + (minLog2 + sampleNs.length - 1)
            + ", 1MiB=" + Math.round(predictNs(1 << 20)) + "ns}";
    }
}
