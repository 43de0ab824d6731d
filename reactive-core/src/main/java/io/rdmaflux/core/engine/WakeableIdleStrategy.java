package io.rdmaflux.core.engine;

import org.agrona.concurrent.IdleStrategy;
import org.jspecify.annotations.Nullable;

import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * An {@link IdleStrategy} that another thread can cut short: while the delegate idles (spins, yields
 * or parks) after a duty cycle that did no work, {@link #wake()} unparks the thread, so work handed
 * in from outside (a new {@code send}, demand, a release) starts at once instead of after the
 * delegate's park period (up to 1 ms for Agrona's default {@code BackoffIdleStrategy}).
 *
 * <p>The flag is set before the delegate idles, so a wake that comes after it always unparks; a wake
 * that races with the flag being set may be missed, which costs at most one park period (what an
 * idle strategy without wake-ups costs every time).
 *
 * <p><b>Concurrency:</b> {@link #idle} and {@link #reset} on the idling thread; {@link #wake} from any
 * thread (one volatile read when the thread is busy).
 */
public final class WakeableIdleStrategy implements IdleStrategy {
    private final IdleStrategy delegate;
    private volatile @Nullable Thread idleThread;

    public WakeableIdleStrategy(IdleStrategy delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            delegate.idle(workCount);
            return;
        }
        idle();
    }

    @Override
    public void idle() {
        idleThread = Thread.currentThread();
        delegate.idle();
        idleThread = null;
    }

    @Override
    public void reset() {
        delegate.reset();
    }

    /** Whether a thread is idling in {@link #idle()} now. */
    public boolean isIdling() {
        return idleThread != null;
    }

    /** Unparks the thread if it is idling now. */
    public void wake() {
        Thread t = idleThread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public String alias() {
        return "wakeable-" + delegate.alias();
    }

    /** The strategy this one idles with. */
    public IdleStrategy delegate() {
        return delegate;
    }

    @Override
    public String toString() {
        return "WakeableIdleStrategy{" + delegate + "}";
    }
}
