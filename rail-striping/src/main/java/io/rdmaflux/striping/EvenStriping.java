package io.rdmaflux.striping;

/** Even striping (seed 000 §4.4): equal stripes on every usable rail, for rails of equal bandwidth. */
final class EvenStriping implements StripingPolicy {
    private final int railCount;
    private final long granuleBytes;
    private final double[] ones;
    private volatile long lastUsable;

    EvenStriping(int railCount, long granuleBytes) {
        this.railCount = RailMask.checkRailCount(railCount);
        this.granuleBytes = StripingPolicies.checkGranule(granuleBytes);
        this.ones = new double[railCount];
        java.util.Arrays.fill(ones, 1.0);
        this.lastUsable = RailMask.all(railCount);
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        lastUsable = usableRails;
        Apportion.split(lengthBytes, ones, usableRails, granuleBytes, stripeBytes);
    }

    /** The share reads 0 for a failed rail at once, not only after the next split. */
    @Override
    public void onRailRemoved(int rail) {
        lastUsable &= ~(1L << rail);
    }

    @Override
    public double share(int rail) {
        long usable = lastUsable;
        return RailMask.contains(usable, rail) ? 1.0 / RailMask.count(usable) : 0.0;
    }

    @Override
    public int railCount() {
        return railCount;
    }

    @Override
    public String name() {
        return "even";
    }
}
