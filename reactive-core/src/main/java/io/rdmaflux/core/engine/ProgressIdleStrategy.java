package io.rdmaflux.core.engine;

import org.agrona.concurrent.IdleStrategy;
import org.jspecify.annotations.Nullable;

import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The idle strategy of rdmaflux progress threads: after a duty cycle that did no work it spins, then
 * yields, then blocks, and another thread that hands work in ({@link #wake()}) ends the block at once.
 * Blocking is in an {@link IdleWait} when one is given (a node driving a provider on the IP fabric
 * blocks in the provider's {@code Selector}, so a frame arriving on a socket wakes it, as in Netty's
 * event loop) and otherwise a park that backs off from {@code minParkNs} to {@code maxParkNs}, as
 * Agrona's {@code BackoffIdleStrategy} does.
 *
 * <h2>Phases</h2>
 * <ol>
 *   <li>{@code maxSpins} calls: {@link Thread#onSpinWait()}.</li>
 *   <li>{@code maxYields} calls: {@link Thread#yield()}.</li>
 *   <li>One call that only <em>arms</em> the strategy (publishes that the thread is about to block)
 *       and returns, so one more duty cycle runs before the first block.</li>
 *   <li>Every further call blocks: {@code wait.await(maxParkNs)}, or, when there is no wait or it
 *       cannot wait now, {@code parkNanos} of a period doubling from {@code minParkNs} to
 *       {@code maxParkNs}.</li>
 * </ol>
 * Any duty cycle that did work ({@code idle(workCount > 0)}) resets to the first phase and disarms. An
 * empty duty cycle that took at least {@link #LONG_EMPTY_CYCLE_NS} (a node with many connections)
 * ends phases 1 and 2 at once ({@link #emptyCycleTook}).
 *
 * <h2>Why the extra duty cycle: no lost wake-ups</h2>
 * A thread handing work in first publishes it (a queue offer) and then calls {@link #wake()}, which
 * does something only while the strategy is armed; it fences first, so that the publication is
 * visible before it reads the flag even when it was an ordered (release) store, which the CPU could
 * otherwise let that read overtake. If it sees the strategy unarmed, its work was
 * published before the progress thread armed, so the duty cycle that runs between arming and the
 * first block sees the work. If it sees the strategy armed, it unparks the thread and calls
 * {@link IdleWait#wakeup()}; both leave a permit when the thread is not blocked yet, so the next
 * block returns at once. Either way no hand-off waits for a timeout. While the thread spins or
 * yields, {@code wake()} costs a fence and one volatile read.
 *
 * <h2>CPU when idle</h2>
 * A node with nothing to do blocks after {@code maxSpins + maxYields + 1} empty duty cycles, so it
 * uses no CPU; with an {@link IdleWait} it wakes once per {@code maxParkNs} for timers. A
 * busy-spinning node is Agrona's {@code BusySpinIdleStrategy}, given to the node's builder.
 *
 * <p><b>Concurrency:</b> {@link #idle}, {@link #reset} on the one progress thread; {@link #wake()}
 * from any thread. An instance holds one thread's state: use {@link #withWait} to get a fresh one
 * with the same parameters for each thread.
 */
public final class ProgressIdleStrategy implements IdleStrategy {
    private static final int SPINNING = 0;
    private static final int YIELDING = 1;
    private static final int ARMING = 2;
    private static final int BLOCKING = 3;
    /** An empty duty cycle at least this long (ns) ends the spin and yield phases: see {@link #emptyCycleTook}. */
    public static final long LONG_EMPTY_CYCLE_NS = 50_000;

    private final int maxSpins;
    private final int maxYields;
    private final long minParkNs;
    private final long maxParkNs;
    private final @Nullable IdleWait wait;

    private int state = SPINNING;
    private long longEmptyCycles;
    private int spins;
    private int yields;
    private long parkNs;
    private long blocks;
    private volatile boolean armed;
    private volatile @Nullable Thread idleThread;

    /**
     * @param maxSpins  empty duty cycles that spin before yielding, {@code >= 0}
     * @param maxYields empty duty cycles that yield before blocking, {@code >= 0}
     * @param minParkNs first park period, ns, in [1, maxParkNs]
     * @param maxParkNs longest park period and the timeout of each {@link IdleWait#await}, ns
     * @throws IllegalArgumentException naming the value out of range
     */
    public ProgressIdleStrategy(int maxSpins, int maxYields, long minParkNs, long maxParkNs) {
        this(maxSpins, maxYields, minParkNs, maxParkNs, null);
    }

    private ProgressIdleStrategy(int maxSpins, int maxYields, long minParkNs, long maxParkNs, @Nullable IdleWait wait) {
        if (maxSpins < 0) {
            throw new IllegalArgumentException("maxSpins >= 0 required but it was " + maxSpins);
        }
        if (maxYields < 0) {
            throw new IllegalArgumentException("maxYields >= 0 required but it was " + maxYields);
        }
        if (minParkNs < 1 || minParkNs > maxParkNs) {
            throw new IllegalArgumentException("minParkNs in [1, maxParkNs=" + maxParkNs + "] required but it was " + minParkNs);
        }
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.minParkNs = minParkNs;
        this.maxParkNs = maxParkNs;
        this.wait = wait;
        this.parkNs = minParkNs;
    }

    /**
     * The default: 10 spins, 5 yields, then block; parks back off from 1 µs to 1 ms (Agrona's
     * {@code BackoffIdleStrategy} defaults), waits time out after 1 ms.
     */
    public static ProgressIdleStrategy backoff() {
        return new ProgressIdleStrategy(10, 5, 1_000, 1_000_000);
    }

    /**
     * For request/response traffic: 200 spins and 50 yields (on the IP fabric each empty duty cycle
     * is a non-blocking read per stream, so this keeps the thread hot for some 100 µs after the last
     * message, long enough for a round trip's reply to arrive without a wake-up), then as
     * {@link #backoff()}. Costs that much CPU after each burst of traffic, none when idle.
     */
    public static ProgressIdleStrategy lowLatency() {
        return new ProgressIdleStrategy(200, 50, 1_000, 1_000_000);
    }

    /** A fresh strategy (no state) with these parameters that blocks in {@code wait} (null: parks). */
    public ProgressIdleStrategy withWait(@Nullable IdleWait wait) {
        return new ProgressIdleStrategy(maxSpins, maxYields, minParkNs, maxParkNs, wait);
    }

    /** The wait this strategy blocks in, or null if it parks. */
    public @Nullable IdleWait idleWait() {
        return wait;
    }

    /**
     * The duty cycle that just did no work took {@code cycleNs}: if that is at least
     * {@link #LONG_EMPTY_CYCLE_NS}, the spin and yield phases end now, so the next {@link #idle(int)} arms.
     * Spinning pays off when a duty cycle is cheap, to pick up new work within a microsecond; a node with
     * many connections (each duty cycle visits every one) would burn {@code maxSpins + maxYields} long
     * cycles of CPU after each piece of work, taking the cores its connecting or sending threads need.
     * Arming early is the path a strategy with no spins and no yields takes, so no wake-up is lost.
     * Progress thread only; called by the engine's agent (DEDICATED mode).
     */
    public void emptyCycleTook(long cycleNs) {
        if (cycleNs >= LONG_EMPTY_CYCLE_NS && state < ARMING) {
            spins = maxSpins;
            yields = maxYields;
            state = YIELDING;
            longEmptyCycles++;
        }
    }

    /** Times the spin and yield phases were cut short by a long empty duty cycle (diagnostics, tests). */
    public long longEmptyCycles() {
        return longEmptyCycles;
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    @Override
    public void idle() {
        if (state == BLOCKING) {
            block();
            return;
        }
        if (state == SPINNING) {
            if (spins < maxSpins) {
                spins++;
                Thread.onSpinWait();
                return;
            }
            state = YIELDING;
        }
        if (state == YIELDING) {
            if (yields < maxYields) {
                yields++;
                Thread.yield();
                return;
            }
            state = ARMING;
        }
        idleThread = Thread.currentThread();
        armed = true;
        state = BLOCKING;
    }

    private void block() {
        blocks++;
        IdleWait w = wait;
        if (w != null && w.await(maxParkNs)) {
            return;
        }
        LockSupport.parkNanos(this, parkNs);
        parkNs = Math.min(parkNs << 1, maxParkNs);
    }

    @Override
    public void reset() {
        spins = 0;
        yields = 0;
        parkNs = minParkNs;
        state = SPINNING;
        if (armed) {
            armed = false;
        }
    }

    /**
     * Ends the progress thread's block, or makes its next block return at once, if it is armed; does
     * nothing (a full fence and two volatile reads; on the progress thread itself no fence) while it
     * works, spins or yields. Call it after
     * publishing the work, by any means (a queue offer, an ordered or volatile store).
     */
    public void wake() {
        if (Thread.currentThread() != idleThread) {
            // The hand-off may have been published with a release store (Agrona's queues link a node or set
            // a slot with an ordered put after their CAS), which the CPU may let this read of armed pass (a
            // store-load reordering): the progress thread could then arm, miss the work in its last duty
            // cycle and block, while this reads armed as false. The fence closes the Dekker pair. The
            // progress thread's own hand-offs need none: it reads what it stored in program order.
            VarHandle.fullFence();
        }
        if (armed) {
            IdleWait w = wait;
            if (w != null) {
                w.wakeup();
            }
            Thread t = idleThread;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    /** Whether the thread is armed: past its spins and yields, blocking or about to. */
    public boolean isArmed() {
        return armed;
    }

    /** Blocks (waits or parks) so far; progress thread only (a read from another thread may lag). */
    public long blocks() {
        return blocks;
    }

    @Override
    public String alias() {
        return wait != null ? "progress-waiting" : "progress-backoff";
    }

    @Override
    public String toString() {
        return "ProgressIdleStrategy{spins=" + maxSpins + ", yields=" + maxYields + ", park=" + minParkNs + ".." + maxParkNs
            + " ns" + (wait != null ? ", wait=" + wait : "") + "}";
    }
}
