package io.rdmaflux.striping;

/**
 * Binding (seed 000 §4.4): every message on one subchannel, the least overhead. When the bound
 * rail is no longer usable (it failed) the lowest usable rail takes over.
 */
final class BindingPolicy implements MultiplexingPolicy {
    private final int railCount;
    private final int rail;

    BindingPolicy(int railCount, int rail) {
        this.railCount = RailMask.checkRailCount(railCount);
        if (rail < 0 || rail >= railCount) {
            throw new IllegalArgumentException("binding rail in [0, " + railCount + ") required but it was " + rail);
        }
        this.rail = rail;
    }

    @Override
    public int selectRail(long lengthBytes, long usableRails) {
        return RailMask.contains(usableRails, rail) ? rail : Long.numberOfTrailingZeros(usableRails);
    }

    @Override
    public int railCount() {
        return railCount;
    }

    @Override
    public String name() {
        return "binding(" + rail + ")";
    }
}
