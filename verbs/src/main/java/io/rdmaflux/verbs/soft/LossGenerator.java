package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.VerbsException;
import java.util.SplittableRandom;

/**
 * Decides which UD datagrams a rail loses, after Aeron's {@code LossGenerator}: seeded and
 * reproducible, so a test that fails under loss fails the same way every run.
 *
 * <p>A generator is stateful (frame counters, random state). {@link RailConfig} holds a prototype;
 * each port takes its own {@link #copy()}, so two ports with the same configuration lose the same
 * frame positions independently.
 *
 * <p><b>Concurrency:</b> not thread-safe; a port's NIC engine is its only caller.
 */
public interface LossGenerator {
    /**
     * Whether to drop the next frame.
     *
     * @param nowNs       current time, ns
     * @param lengthBytes payload length of the frame
     */
    boolean shouldDrop(long nowNs, int lengthBytes);

    /** A fresh generator with the same parameters and initial state. */
    LossGenerator copy();

    /** Never drops. */
    static LossGenerator none() {
        return new Loss.None();
    }

    /**
     * Drops each frame independently with probability {@code rate}.
     *
     * @param rate in [0, 1]
     * @param seed random seed
     */
    static LossGenerator random(double rate, long seed) {
        if (!(rate >= 0 && rate <= 1)) {
            throw new VerbsException("loss rate must be in [0, 1] but it was " + rate);
        }
        return new Loss.Random(rate, seed);
    }

    /**
     * Drops one frame in every {@code gap}: frames gap-1, 2*gap-1, ... (0-based).
     *
     * @param gap &gt;= 1 (1 drops everything)
     */
    static LossGenerator fixedGap(int gap) {
        if (gap < 1) {
            throw new VerbsException("gap >= 1 required but it was " + gap);
        }
        return new Loss.MultiGap(gap - 1, 1, gap);
    }

    /**
     * Drops {@code gapLength} consecutive frames out of every {@code period}, starting at frame
     * {@code firstDrop} of each period (0-based), as Aeron's multi-gap generator.
     */
    static LossGenerator multiGap(int firstDrop, int gapLength, int period) {
        if (period < 1) {
            throw new VerbsException("period >= 1 required but it was " + period);
        }
        if (gapLength < 0 || gapLength > period) {
            throw new VerbsException("gapLength must be in [0, period=" + period + "] but it was " + gapLength);
        }
        if (firstDrop < 0 || firstDrop + gapLength > period) {
            throw new VerbsException("firstDrop must be in [0, period - gapLength = " + (period - gapLength)
                + "] but it was " + firstDrop);
        }
        return new Loss.MultiGap(firstDrop, gapLength, period);
    }

    /**
     * Bursty loss (Gilbert-Elliott two-state model): in the good state nothing is lost and the chain
     * enters the bad state with probability {@code pEnterBurst} per frame; in the bad state every
     * frame is lost and the chain leaves it with probability {@code pLeaveBurst}. Mean burst length
     * is {@code 1 / pLeaveBurst} frames.
     */
    static LossGenerator burst(double pEnterBurst, double pLeaveBurst, long seed) {
        if (!(pEnterBurst >= 0 && pEnterBurst <= 1)) {
            throw new VerbsException("pEnterBurst must be in [0, 1] but it was " + pEnterBurst);
        }
        if (!(pLeaveBurst > 0 && pLeaveBurst <= 1)) {
            throw new VerbsException("pLeaveBurst must be in (0, 1] but it was " + pLeaveBurst);
        }
        return new Loss.Burst(pEnterBurst, pLeaveBurst, seed);
    }
}

/** The built-in generators. */
final class Loss {
    private Loss() {
    }

    static final class None implements LossGenerator {
        @Override
        public boolean shouldDrop(long nowNs, int lengthBytes) {
            return false;
        }

        @Override
        public LossGenerator copy() {
            return this;
        }

        @Override
        public String toString() {
            return "none";
        }
    }

    static final class Random implements LossGenerator {
        private final double rate;
        private final long seed;
        private final SplittableRandom random;

        Random(double rate, long seed) {
            this.rate = rate;
            this.seed = seed;
            this.random = new SplittableRandom(seed);
        }

        @Override
        public boolean shouldDrop(long nowNs, int lengthBytes) {
            return rate > 0 && random.nextDouble() < rate;
        }

        @Override
        public LossGenerator copy() {
            return new Random(rate, seed);
        }

        @Override
        public String toString() {
            return "random(" + rate + ", seed=" + seed + ")";
        }
    }

    static final class MultiGap implements LossGenerator {
        private final int firstDrop;
        private final int gapLength;
        private final int period;
        private long frame;

        MultiGap(int firstDrop, int gapLength, int period) {
            this.firstDrop = firstDrop;
            this.gapLength = gapLength;
            this.period = period;
        }

        @Override
        public boolean shouldDrop(long nowNs, int lengthBytes) {
            long inPeriod = frame++ % period;
            return inPeriod >= firstDrop && inPeriod < firstDrop + gapLength;
        }

        @Override
        public LossGenerator copy() {
            return new MultiGap(firstDrop, gapLength, period);
        }

        @Override
        public String toString() {
            return "gap(first=" + firstDrop + ", length=" + gapLength + ", period=" + period + ")";
        }
    }

    static final class Burst implements LossGenerator {
        private final double pEnter;
        private final double pLeave;
        private final long seed;
        private final SplittableRandom random;
        private boolean inBurst;

        Burst(double pEnter, double pLeave, long seed) {
            this.pEnter = pEnter;
            this.pLeave = pLeave;
            this.seed = seed;
            this.random = new SplittableRandom(seed);
        }

        @Override
        public boolean shouldDrop(long nowNs, int lengthBytes) {
            if (inBurst) {
                if (random.nextDouble() < pLeave) {
                    inBurst = false;
                }
            } else if (random.nextDouble() < pEnter) {
                inBurst = true;
            }
            return inBurst;
        }

        @Override
        public LossGenerator copy() {
            return new Burst(pEnter, pLeave, seed);
        }

        @Override
        public String toString() {
            return "burst(enter=" + pEnter + ", leave=" + pLeave + ", seed=" + seed + ")";
        }
    }
}
