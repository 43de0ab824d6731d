package io.rdmaflux.striping;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The counters behind one virtual channel's {@link StripingMetrics}: per-rail bytes, messages and
 * stripes, failed rails, released messages, out-of-order completions, re-sent stripes and the
 * weight history ({@link StripingMetrics#weightHistory()}).
 *
 * <p><b>Scheduler SPI.</b> Public for schedulers outside this package that report
 * {@link StripingMetrics}: both schedulers of this module keep one, the {@link CommunicationScheduler}
 * (Reactor operators, {@code verbs} rails) and the connection scheduler of
 * {@link io.rdmaflux.striping.connection.RailsChannelFactory}, and so may a custom
 * {@code SubchannelScheduler}. A scheduler calls {@link #posted}, {@link #completed} and the other
 * recorders as its stripes and messages go, and hands out {@link #snapshot}s. Applications that use
 * the shipped schedulers read {@link StripingMetrics} instead and never need this class.
 *
 * <p><b>Errors:</b> the constructor checks its arguments ({@link IllegalArgumentException}); a
 * {@code rail} outside {@code [0, railCount)}, or a {@code shares} array shorter than the rail
 * count, throws {@link IndexOutOfBoundsException}.
 *
 * <p><b>Thread-safety:</b> one writer thread (the scheduler's) with ordered stores, no lock on
 * the data path; {@link #snapshot} may be called from any thread at any time and may see one
 * update later than the writer (each counter is consistent on its own, not with the others).
 * Calling the recorders from two threads loses counts.
 */
public final class RailCounters {
    private final int railCount;
    private final AtomicLongArray bytes;
    private final AtomicLongArray messages;
    private final AtomicLongArray stripesCompleted;
    private final AtomicLongArray stripesPosted;
    private final AtomicLongArray failed;
    private final AtomicLong messagesReleased = new AtomicLong();
    private final AtomicLong outOfOrder = new AtomicLong();
    private final AtomicLong resentStripes = new AtomicLong();
    private final WeightHistory history;

    /**
     * @param railCount       rails of the channel, 1..64
     * @param historyCapacity weight samples kept (oldest dropped first), {@code >= 0}
     * @throws IllegalArgumentException if {@code railCount} is outside [1, 64] or {@code historyCapacity} is negative
     */
    public RailCounters(int railCount, int historyCapacity) {
        this.railCount = RailMask.checkRailCount(railCount);
        if (historyCapacity < 0) {
            throw new IllegalArgumentException("historyCapacity >= 0 required but it was " + historyCapacity);
        }
        this.bytes = new AtomicLongArray(railCount);
        this.messages = new AtomicLongArray(railCount);
        this.stripesCompleted = new AtomicLongArray(railCount);
        this.stripesPosted = new AtomicLongArray(railCount);
        this.failed = new AtomicLongArray(railCount);
        this.history = new WeightHistory(railCount, historyCapacity);
    }

    /** A stripe (or a whole multiplexed message) was posted on {@code rail}. */
    public void posted(int rail) {
        stripesPosted.lazySet(rail, stripesPosted.get(rail) + 1);
    }

    /** A stripe (or a whole multiplexed message) of {@code lengthBytes} completed on {@code rail}. */
    public void completed(int rail, long lengthBytes) {
        bytes.lazySet(rail, bytes.get(rail) + lengthBytes);
        stripesCompleted.lazySet(rail, stripesCompleted.get(rail) + 1);
    }

    /** A message completed; it counts once on every rail of {@code railsMask} (the rails that carried its bytes). */
    public void messageCompleted(long railsMask) {
        for (int rail = 0; rail < railCount; rail++) {
            if (RailMask.contains(railsMask, rail)) {
                messages.lazySet(rail, messages.get(rail) + 1);
            }
        }
    }

    /** {@code rail} failed. */
    public void railFailed(int rail) {
        failed.lazySet(rail, 1);
    }

    /** The completion filter released one message (every stripe of it completed). */
    public void messageReleased() {
        messagesReleased.lazySet(messagesReleased.get() + 1);
    }

    /** A message's last stripe completed while an earlier PSN was still outstanding. */
    public void outOfOrderCompletion() {
        outOfOrder.lazySet(outOfOrder.get() + 1);
    }

    /** A stripe was posted again after its rail failed. */
    public void resent() {
        resentStripes.lazySet(resentStripes.get() + 1);
    }

    /** Records the weights {@code shares} (one per rail) at {@code nowNs} of the channel's clock. */
    public void recordWeights(long nowNs, double[] shares) {
        history.record(nowNs, shares);
    }

    /** A consistent-per-counter copy; {@code shares} is the caller's current weights (kept, not copied). */
    public StripingMetrics snapshot(String multiplexingName, String stripingName, double[] shares) {
        long[] b = new long[railCount];
        long[] m = new long[railCount];
        long[] c = new long[railCount];
        long[] p = new long[railCount];
        boolean[] up = new boolean[railCount];
        for (int i = 0; i < railCount; i++) {
            b[i] = bytes.get(i);
            m[i] = messages.get(i);
            c[i] = stripesCompleted.get(i);
            p[i] = stripesPosted.get(i);
            up[i] = failed.get(i) == 0;
        }
        return new StripingMetrics(multiplexingName, stripingName, b, m, c, p, up, shares,
            messagesReleased.get(), outOfOrder.get(), resentStripes.get(), history.snapshot());
    }
}
