package io.rdmaflux.verbs.ucx;

import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.UcxException;
import org.openucx.jucx.ucp.UcpWorker;

/**
 * A timed blocking wait on one UCP worker's event fd: {@code UcpWorker.arm()} then
 * {@code UcpWorker.waitForEvents()} (UCX's {@code ucp_worker_arm} / {@code ucp_worker_wait}), ended by
 * an arriving message, by {@link #wakeup()} ({@code UcpWorker.signal()}, {@code ucp_worker_signal},
 * which UCX allows from any thread), or by a deadline. JUCX's wait has no timeout and Java cannot poll
 * the fd itself ({@code getEventFD()} is a bare int), so the deadline is a {@code signal()} from a
 * timer thread of this wait's own, started on the first wait and stopped by {@link #close()}.
 *
 * <p><b>Protocol</b> (engine thread): after a pass with no work the NIC calls {@link #await}; it
 * {@code arm()}s the worker (UCX refuses with {@code UCS_ERR_BUSY} while events are unprocessed: the
 * wait then returns at once, "cut short", and the next pass progresses them), then checks for a
 * {@code wakeup()} that came before (its flag; a later one signals the armed fd), publishes the
 * deadline to the timer and blocks. A {@code wakeup()} with no wait in progress leaves its flag and
 * signal, so the next wait returns at once, as {@code Selector.wakeup()} does. Waits may end early for
 * no reason (a stale timer signal): callers run a duty cycle after every wait, as
 * {@link io.rdmaflux.verbs.RdmaProvider#awaitWork(long)} says.
 *
 * <p><b>Needs</b> the context's wakeup feature ({@code UcpParams.requestWakeupFeature()}) and the
 * worker's receive and send wakeup ({@code UcpWorkerParams.requestWakeupRX().requestWakeupTX()}: a
 * send UCX had to queue must wake the engine too, or it would wait for the deadline to push it out).
 *
 * <p><b>Concurrency:</b> {@link #await} on the worker's engine thread; {@link #wakeup()} any thread;
 * {@link #close()} once the engine stopped, before the worker is closed (the timer must not signal a
 * destroyed worker).
 */
final class UcxEventWait implements AutoCloseable {
    /**
     * Shortest wait worth blocking for, ns (20 µs): a wake-up through the fd and the scheduler costs
     * about that on this kind of host, so a shorter deadline returns false and the caller spins or parks.
     */
    static final long MIN_WAIT_NS = 20_000L;

    private final UcpWorker worker;
    private final String name;
    /** The wait in progress (its sequence number), or 0; written by the engine thread. */
    private volatile long activeWait;
    private volatile long deadlineNs;
    /** When the timer thread looks next (its park's deadline), or 0 while it parks until unparked. */
    private volatile long timerTargetNs;
    private volatile long waits;
    private volatile boolean wakeupPending;
    private volatile boolean closed;
    private @Nullable Thread timer;
    private long armBusy;

    UcxEventWait(UcpWorker worker, String name) {
        this.worker = worker;
        this.name = name;
    }

    /**
     * Blocks until a UCX event, {@link #wakeup()}, or about {@code timeoutNs} (engine thread).
     *
     * @return true if it waited or was cut short (run a pass now), false if it returned at once without
     *     arming (closed, or {@code timeoutNs} under {@link #MIN_WAIT_NS})
     */
    boolean await(long timeoutNs) {
        if (closed || timeoutNs < MIN_WAIT_NS) {
            return false;
        }
        if (wakeupPending) {
            wakeupPending = false;
            return true;
        }
        try {
            worker.arm();
        } catch (UcxException busy) {
            armBusy++;
            return true; // events pending: the next pass progresses them
        }
        if (wakeupPending) { // came between the check above and arm(): its signal may have been drained
            wakeupPending = false;
            return true;
        }
        long seq = ++waits;
        long deadline = System.nanoTime() + timeoutNs;
        deadlineNs = deadline;
        activeWait = seq;
        Thread t = timer;
        if (t == null) {
            t = new Thread(this::runTimer, "rdmaflux-ucx-wait-" + name);
            t.setDaemon(true);
            timer = t;
            t.start();
        } else {
            // wake the timer only if it would look too late: it sleeps until unparked (0) or until an
            // earlier wait's deadline, after which it looks at this one anyway. Unparking it on every
            // wait cost a context switch per wait (4 KiB bandwidth on a loaded two-core host)
            long target = timerTargetNs;
            if (target == 0 || deadline - target < 0) {
                LockSupport.unpark(t);
            }
        }
        try {
            worker.waitForEvents();
        } finally {
            activeWait = 0;
        }
        wakeupPending = false;
        return true;
    }

    /** Ends a wait in progress, or makes the next one return at once (any thread). */
    void wakeup() {
        wakeupPending = true;
        synchronized (this) { // not after close(): the worker may be destroyed then
            if (!closed) {
                worker.signal();
            }
        }
    }

    /** Waits that found events pending at {@code arm()} (returned at once). */
    long armBusy() {
        return armBusy;
    }

    /** Waits that blocked so far. */
    long waits() {
        return waits;
    }

    /** Ends the wait in progress at its deadline: parks until then and signals if it is still the same wait. */
    private void runTimer() {
        long signalled = 0;
        while (!closed) {
            long seq = activeWait;
            if (seq == 0 || seq == signalled) {
                timerTargetNs = 0;
                if (activeWait == seq) { // re-checked after publishing 0: a wait published since sees 0 and unparks
                    LockSupport.park(this);
                }
                continue;
            }
            long deadline = deadlineNs;
            long leftNs = deadline - System.nanoTime();
            if (leftNs > 0) {
                timerTargetNs = deadline;
                if (activeWait == seq) { // a later wait with an earlier deadline sees this target and unparks
                    LockSupport.parkNanos(this, leftNs);
                }
                continue;
            }
            synchronized (this) {
                if (activeWait == seq && !closed) {
                    worker.signal();
                }
            }
            signalled = seq;
        }
    }

    /** Stops the timer thread (joins it); later waits return false. Idempotent; engine stopped. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        Thread t = timer;
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            timer = null;
        }
    }
}
