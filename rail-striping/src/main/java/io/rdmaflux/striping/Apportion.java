package io.rdmaflux.striping;

/**
 * Turns per-rail shares into stripe lengths: whole granules by largest remainder (Hamilton's
 * method, so the result is the closest integer split and never drifts), the message's last partial
 * granule to the rail with the largest share.
 */
final class Apportion {
    private Apportion() {
    }

    /**
     * @param shares      non-negative shares per rail; rails outside {@code usable} are ignored;
     *                    if all usable shares are 0 the usable rails share evenly
     * @param stripeBytes output, one entry per rail, adds up to {@code lengthBytes}
     */
    static void split(long lengthBytes, double[] shares, long usable, long granuleBytes, long[] stripeBytes) {
        int railCount = stripeBytes.length;
        double total = 0;
        int best = -1;
        for (int rail = 0; rail < railCount; rail++) {
            stripeBytes[rail] = 0;
            if (RailMask.contains(usable, rail)) {
                total += shares[rail];
                if (best < 0 || shares[rail] > shares[best]) {
                    best = rail;
                }
            }
        }
        boolean even = total <= 0;
        if (even) {
            total = RailMask.count(usable);
        }
        long granules = lengthBytes / granuleBytes;
        long assigned = 0;
        for (int rail = 0; rail < railCount; rail++) {
            if (RailMask.contains(usable, rail)) {
                double share = even ? 1.0 : shares[rail];
                long g = (long) Math.floor(granules * share / total);
                stripeBytes[rail] = g;
                assigned += g;
            }
        }
        // hand out the granules lost to flooring, largest fractional remainder first
        while (assigned < granules) {
            int pick = -1;
            double bestRemainder = -1;
            for (int rail = 0; rail < railCount; rail++) {
                if (!RailMask.contains(usable, rail)) {
                    continue;
                }
                double share = even ? 1.0 : shares[rail];
                double remainder = granules * share / total - stripeBytes[rail];
                if (remainder > bestRemainder) {
                    bestRemainder = remainder;
                    pick = rail;
                }
            }
            stripeBytes[pick]++;
            assigned++;
        }
        for (int rail = 0; rail < railCount; rail++) {
            stripeBytes[rail] *= granuleBytes;
        }
        stripeBytes[best] += lengthBytes - granules * granuleBytes;
    }
}
