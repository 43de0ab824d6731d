package io.rdmaflux.striping;

/**
 * Window-based round robin (seed 000 §4.4): a subchannel carries {@code W} consecutive messages
 * before the scheduler moves to the next one, so that on subchannels of different latency only
 * the messages at window boundaries can overtake each other.
 */
final class WindowRoundRobinPolicy implements MultiplexingPolicy {
    private final int railCount;
    private final int window;
    private int rail;
    private int sentInWindow;

    WindowRoundRobinPolicy(int railCount, int window) {
        this.railCount = RailMask.checkRailCount(railCount);
        if (window < 1) {
            throw new IllegalArgumentException("window > 0 required but it was " + window);
        }
        this.window = window;
    }

    @Override
    public int selectRail(long lengthBytes, long usableRails) {
        if (sentInWindow == window || !RailMask.contains(usableRails, rail)) {
            int from = sentInWindow == window ? rail + 1 : rail;
            rail = RoundRobinPolicy.nextUsable(from % railCount, usableRails, railCount);
            sentInWindow = 0;
        }
        sentInWindow++;
        return rail;
    }

    @Override
    public int railCount() {
        return railCount;
    }

    @Override
    public String name() {
        return "window-rr(" + window + ")";
    }
}
