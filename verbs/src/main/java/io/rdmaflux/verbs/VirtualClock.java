package io.rdmaflux.verbs;

import java.util.concurrent.atomic.AtomicLong;
import org.agrona.concurrent.NanoClock;

/**
 * A {@link NanoClock} whose time only moves when a test moves it: the clock of deterministic,
 * virtual-time runs. Pass it to a provider (e.g. the soft provider's builder) together with
 * {@link ThreadingMode#INVOKER}, then alternate {@link #advance(long)} and
 * {@code provider.progress(clock.nanoTime())}.
 *
 * <p><b>Concurrency:</b> thread-safe; reads and updates are atomic. Time never goes backwards:
 * {@link #advance(long)} rejects negative steps and {@link #set(long)} rejects earlier times.
 */
public final class VirtualClock implements NanoClock {
    private final AtomicLong nowNs;

    /** A clock starting at 0 ns. */
    public VirtualClock() {
        this(0);
    }

    /** A clock starting at {@code startNs}. */
    public VirtualClock(long startNs) {
        this.nowNs = new AtomicLong(startNs);
    }

    @Override
    public long nanoTime() {
        return nowNs.get();
    }

    /**
     * Moves time forward.
     *
     * @param deltaNs how far, in ns, &gt;= 0
     * @return the new time in ns
     * @throws IllegalArgumentException if {@code deltaNs} is negative
     */
    public long advance(long deltaNs) {
        if (deltaNs < 0) {
            throw new IllegalArgumentException("deltaNs >= 0 required but it was " + deltaNs + "; a clock never goes backwards");
        }
        return nowNs.addAndGet(deltaNs);
    }

    /**
     * Sets the time.
     *
     * @param timeNs the new time in ns, not earlier than the current one
     * @throws IllegalArgumentException if {@code timeNs} is earlier than now
     */
    public void set(long timeNs) {
        long prev;
        do {
            prev = nowNs.get();
            if (timeNs < prev) {
                throw new IllegalArgumentException("time " + timeNs + " ns is before the clock's current " + prev
                    + " ns; a clock never goes backwards");
            }
        } while (!nowNs.compareAndSet(prev, timeNs));
    }

    @Override
    public String toString() {
        return "VirtualClock{" + nowNs.get() + " ns}";
    }
}
