package io.rdmaflux.striping;

/**
 * Round robin (seed 000 §4.4): message {@code k} goes to the {@code k}-th usable rail in turn,
 * ignoring the message size because the per-operation cost dominates small messages.
 * Also the small-message policy of seed 002 §3.2.
 */
final class RoundRobinPolicy implements MultiplexingPolicy {
    private final int railCount;
    private int next;

    RoundRobinPolicy(int railCount) {
        this.railCount = RailMask.checkRailCount(railCount);
    }

    @Override
    public int selectRail(long lengthBytes, long usableRails) {
        int rail = nextUsable(next, usableRails, railCount);
        next = (rail + 1) % railCount;
        return rail;
    }

    /** First usable rail at or after {@code from}, wrapping around. */
    static int nextUsable(int from, long usableRails, int railCount) {
        for (int i = 0; i < railCount; i++) {
            int rail = (from + i) % railCount;
            if (RailMask.contains(usableRails, rail)) {
                return rail;
            }
        }
        throw new IllegalStateException("usableRails must not be empty (mask 0x" + Long.toHexString(usableRails) + ")");
    }

    @Override
    public int railCount() {
        return railCount;
    }

    @Override
    public String name() {
        return "round-robin";
    }
}
