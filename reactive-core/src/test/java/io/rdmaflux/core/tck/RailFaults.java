package io.rdmaflux.core.tck;

/**
 * Wire faults a {@link ConnectionTck} pair may be asked to run under: the fraction of RC frames
 * (requests and responses) and of UD datagrams lost, duplicated, held back and corrupted on every rail,
 * each way, from a seed, so a failing run can be repeated. A corrupted RC frame fails the receiving NIC's
 * ICRC check and is dropped (then retransmitted, as after a loss); a corrupted UD datagram is delivered
 * with a byte flipped, for the reliable UD channel's CRC32C to catch. A suite whose pair can inject them overrides
 * {@link ConnectionTck#supportsRailFaults()} and applies {@link PairOptions#railFaults()} in its
 * {@link ConnectionTck#openPair}; the pairs of this package do it on the soft provider's RC fault model
 * ({@link SoftRails}).
 *
 * @param lossRate       fraction of frames dropped, in [0, 1)
 * @param duplicateRate  fraction of frames delivered twice, in [0, 1)
 * @param reorderRate    fraction of frames held back {@code reorderDelayNs} so later ones overtake them, in [0, 1)
 * @param reorderDelayNs how long a reordered frame is held back, ns (&gt; 0)
 * @param corruptRate    fraction of frames corrupted (a byte flipped in a copy, never in the sender's memory), in
 *                       [0, 1] (1: every frame, so nothing gets through and the RC retries run out)
 * @param seed           seed of every random choice
 */
public record RailFaults(double lossRate, double duplicateRate, double reorderRate, long reorderDelayNs, double corruptRate,
                         long seed) {
    /** The hold-back of a reordered frame unless given: 10 µs, two rail-skew steps of the TCK. */
    public static final long DEFAULT_REORDER_DELAY_NS = 10_000;

    public RailFaults {
        check("lossRate", lossRate);
        check("duplicateRate", duplicateRate);
        check("reorderRate", reorderRate);
        if (reorderDelayNs <= 0) {
            throw new IllegalArgumentException("reorderDelayNs > 0 required but it was " + reorderDelayNs);
        }
        if (!(corruptRate >= 0 && corruptRate <= 1)) {
            throw new IllegalArgumentException("corruptRate in [0, 1] required but it was " + corruptRate);
        }
    }

    /** Faults with the {@link #DEFAULT_REORDER_DELAY_NS default hold-back} and no corruption. */
    public RailFaults(double lossRate, double duplicateRate, double reorderRate, long seed) {
        this(lossRate, duplicateRate, reorderRate, DEFAULT_REORDER_DELAY_NS, 0, seed);
    }

    /** Only corruption: a fraction {@code corruptRate} (in [0, 1]) of the frames corrupted. */
    public static RailFaults corruption(double corruptRate, long seed) {
        return new RailFaults(0, 0, 0, DEFAULT_REORDER_DELAY_NS, corruptRate, seed);
    }

    private static void check(String name, double rate) {
        if (!(rate >= 0 && rate < 1)) {
            throw new IllegalArgumentException(name + " in [0, 1) required but it was " + rate);
        }
    }

    @Override
    public String toString() {
        return "loss " + percent(lossRate) + ", dup " + percent(duplicateRate) + ", reorder " + percent(reorderRate) + " by "
            + reorderDelayNs + " ns, corrupt " + percent(corruptRate) + ", seed " + seed;
    }

    private static String percent(double rate) {
        return (rate * 100) + " %";
    }
}
