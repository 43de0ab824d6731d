package io.rdmaflux.core.tck;

/**
 * RC wire faults a {@link ConnectionTck} pair may be asked to run under: the fraction of frames lost,
 * duplicated and reordered on every rail, from a seed, so a failing run can be repeated. A hook: the
 * soft provider's RC path takes none of these yet, so the suites in this module report
 * {@link ConnectionTck#supportsRailFaults()} false and the fault tests are skipped; a suite whose pair
 * can inject them overrides it and applies {@link PairOptions#railFaults()} in its
 * {@link ConnectionTck#openPair}.
 *
 * @param lossRate      fraction of frames dropped, in [0, 1)
 * @param duplicateRate fraction of frames delivered twice, in [0, 1)
 * @param reorderRate   fraction of frames delayed behind later ones, in [0, 1)
 * @param seed          seed of every random choice
 */
public record RailFaults(double lossRate, double duplicateRate, double reorderRate, long seed) {
    public RailFaults {
        check("lossRate", lossRate);
        check("duplicateRate", duplicateRate);
        check("reorderRate", reorderRate);
    }

    private static void check(String name, double rate) {
        if (!(rate >= 0 && rate < 1)) {
            throw new IllegalArgumentException(name + " in [0, 1) required but it was " + rate);
        }
    }
}
