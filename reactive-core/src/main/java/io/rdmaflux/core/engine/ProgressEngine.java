package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.ThreadingMode;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;
import org.agrona.concurrent.NanoClock;
import org.jspecify.annotations.Nullable;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs {@link ProgressAgent}s in one of three {@link ThreadingMode}s, in the manner of Aeron's
 * media driver:
 *
 * <ul>
 *   <li>DEDICATED: one named thread ({@code rdmaflux-progress-<name>}) for this engine, started by
 *       the constructor and stopped by {@link #close()}.</li>
 *   <li>SHARED: the agents run on the one JVM-wide {@code rdmaflux-progress-shared} thread, which
 *       starts with its first engine and stops when its last engine closes.</li>
 *   <li>INVOKER: no thread; the caller calls {@link #invoke()}. Deterministic tests drive virtual
 *       time this way.</li>
 * </ul>
 *
 * <p>Each duty cycle runs the tasks handed in by {@link #execute(Runnable)}, reads the clock once and
 * passes {@code nowNs} to the agents it visits: every agent that is doing work, and one that has been idle
 * only when it is {@linkplain Registration#signal() signalled}, when the cycle's rotation reaches it, or when
 * nothing else had work (every such cycle in INVOKER mode, at most once per ms on a thread). Only agents that
 * opted in ({@link Registration#signalDriven()}) are ever skipped; work handed to one without a signal is
 * delayed by about one busy cycle per agent (the rotation) or 1 ms (the idle sweep) ({@link AgentSchedule}).
 * All protocol state of rdmaflux is confined to the progress thread, and Reactor signals are emitted from it.
 *
 * <p><b>Concurrency:</b> {@link #add}, {@link #remove}, {@link #execute} and {@link #close} are
 * thread-safe; {@link #invoke()} must be called by one thread at a time. <b>Errors:</b> an agent
 * that throws is reported to the error handler and keeps its place.
 */
public final class ProgressEngine implements AutoCloseable {
    /**
     * How long, in ms, {@link #close()} waits for a progress thread to end after its runner stopped (the
     * thread only has to return from {@code run()} by then), and how often a SHARED engine's close that
     * waits for a blocked duty cycle logs that it still waits.
     */
    static final long THREAD_END_TIMEOUT_MS = 5_000;
    private static final System.Logger LOG = System.getLogger(ProgressEngine.class.getName());

    private final String name;
    private final ThreadingMode mode;
    private final NanoClock clock;
    private final ErrorHandler errorHandler;
    private final ManyToOneConcurrentLinkedQueue<Runnable> tasks = new ManyToOneConcurrentLinkedQueue<>();
    private final AgentSchedule schedule;
    private volatile @Nullable Thread progressThread;
    private final @Nullable AgentRunner runner;
    /** The DEDICATED thread, joined by {@link #close()}. */
    private final @Nullable Thread thread;
    /** The DEDICATED thread's strategy when it is ours (wakes without a lost-wake-up race). */
    private final @Nullable ProgressIdleStrategy progressIdle;
    /** The DEDICATED thread's strategy wrapping a caller's one. */
    private final @Nullable WakeableIdleStrategy wrappedIdle;
    private volatile boolean closed;
    /** Run at the end of each duty cycle (see {@link #endOfCycle}). */
    private volatile @Nullable ProgressAgent endOfCycle;
    /** Claimed by the one {@link #close()} call that stops the engine. */
    private final java.util.concurrent.atomic.AtomicBoolean closeCalled = new java.util.concurrent.atomic.AtomicBoolean();
    /**
     * SHARED: whether the shared thread is inside this engine's duty cycle. With {@link #closed} it forms
     * a Dekker pair (both volatile): the thread sets this then reads {@code closed}, {@link #close()} sets
     * {@code closed} then reads this, so either the cycle sees the close and does nothing, or the close
     * sees the cycle and waits for it to end.
     */
    private volatile boolean inSharedCycle;
    /** A thread in {@link #close()} waiting for {@link #inSharedCycle} to clear; unparked when it does. */
    private volatile @Nullable Thread closeWaiter;
    /** How often, in ms, a close waiting for the shared thread's duty cycle logs that it still waits. */
    private volatile long closeWarningMs = THREAD_END_TIMEOUT_MS;

    /**
     * @param name         used in the thread name
     * @param idleStrategy how the thread idles when no agent did work (DEDICATED; SHARED uses the shared
     *                     thread's): a {@link ProgressIdleStrategy} is used as it is (give each engine its
     *                     own); any other is wrapped in a {@link WakeableIdleStrategy}
     */
    public ProgressEngine(String name, ThreadingMode mode, NanoClock clock, IdleStrategy idleStrategy, ErrorHandler errorHandler) {
        this.name = Objects.requireNonNull(name, "name");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.errorHandler = Objects.requireNonNull(errorHandler, "errorHandler");
        // INVOKER: every idle cycle visits every agent, as deterministic tests drive it
        this.schedule = new AgentSchedule(AgentSchedule.DEFAULT_COLD_AFTER, AgentSchedule.DEFAULT_ROTATION_SLICE,
            mode == ThreadingMode.INVOKER ? 0 : AgentSchedule.DEFAULT_IDLE_SWEEP_NS);
        if (mode == ThreadingMode.DEDICATED) {
            IdleStrategy idle;
            if (idleStrategy instanceof ProgressIdleStrategy p) {
                this.progressIdle = p;
                this.wrappedIdle = null;
                idle = p;
            } else {
                this.progressIdle = null;
                this.wrappedIdle = new WakeableIdleStrategy(idleStrategy);
                idle = wrappedIdle;
            }
            this.runner = new AgentRunner(idle, errorHandler, null, new EngineAgent(this, "rdmaflux-progress-" + name));
            this.thread = AgentRunner.startOnThread(runner, r -> {
                Thread t = new Thread(r);
                t.setDaemon(true);
                return t;
            });
        } else {
            this.runner = null;
            this.thread = null;
            this.progressIdle = null;
            this.wrappedIdle = null;
            if (mode == ThreadingMode.SHARED) {
                SharedProgressThread.join(this);
            }
        }
    }

    public String name() {
        return name;
    }

    public ThreadingMode mode() {
        return mode;
    }

    /** The strategy the DEDICATED thread idles with; null in SHARED and INVOKER mode. */
    public @Nullable IdleStrategy idleStrategy() {
        if (progressIdle != null) {
            return progressIdle;
        }
        WakeableIdleStrategy w = wrappedIdle;
        return w == null ? null : w.delegate();
    }

    public NanoClock clock() {
        return clock;
    }

    /**
     * Adds an agent; it runs from the next duty cycle on, hot (see {@link Registration}).
     *
     * @return its registration, through which it is signalled when work for it arrives
     */
    public synchronized Registration add(ProgressAgent agent) {
        return schedule.add(Objects.requireNonNull(agent, "agent"));
    }

    /** Removes an agent; it may still run in a duty cycle already started. */
    public synchronized void remove(ProgressAgent agent) {
        schedule.remove(agent);
    }

    /**
     * Diagnostics: whether {@code agent} is cold now (signal driven and idle: busy duty cycles skip it until
     * it is signalled or the rotation reaches it). Progress thread, or a thread that drives INVOKER mode.
     *
     * @throws IllegalArgumentException if the agent is not added to this engine
     */
    public boolean isCold(ProgressAgent agent) {
        return schedule.isCold(agent);
    }

    /** Runs {@code task} on the progress thread at the start of the next duty cycle. */
    public void execute(Runnable task) {
        tasks.offer(task);
    }

    /**
     * Cuts the progress thread's idling short (DEDICATED: this engine's thread; SHARED: the shared
     * thread) so work just handed in from another thread starts now; no-op in INVOKER mode. Call it
     * after publishing the work. Cheap when the thread is busy: a fence and a volatile read. With a
     * {@link ProgressIdleStrategy} (the default) no wake is lost; a blocked thread is unparked or, if
     * it waits in its provider's selector, woken with {@code Selector.wakeup()}.
     */
    public void wake() {
        ProgressIdleStrategy p = progressIdle;
        if (p != null) {
            p.wake();
            return;
        }
        WakeableIdleStrategy w = wrappedIdle;
        if (w != null) {
            w.wake();
        } else if (mode == ThreadingMode.SHARED) {
            SharedProgressThread.wake();
        }
    }

    /** Whether the calling thread is the one running this engine's agents now. */
    public boolean isProgressThread() {
        return Thread.currentThread() == progressThread;
    }

    /** Number of agents. */
    public int agentCount() {
        return schedule.size();
    }

    /**
     * Runs one duty cycle on the calling thread (INVOKER mode).
     *
     * @return the work done
     * @throws IllegalStateException in another mode, naming it
     */
    public int invoke() {
        if (mode != ThreadingMode.INVOKER) {
            throw new IllegalStateException("invoke() drives an INVOKER-mode engine but engine '" + name + "' runs in " + mode + " mode");
        }
        Thread previous = progressThread;
        progressThread = Thread.currentThread();
        try {
            return dutyCycle();
        } finally {
            progressThread = previous;
        }
    }

    int dutyCycle() {
        if (closed) {
            return 0;
        }
        int work = 0;
        Runnable task;
        while ((task = tasks.poll()) != null) {
            try {
                task.run();
            } catch (Throwable t) {
                errorHandler.onError(t);
            }
            work++;
        }
        long nowNs = clock.nanoTime();
        work += schedule.run(nowNs, errorHandler);
        ProgressAgent end = endOfCycle;
        if (end != null) {
            try {
                work += end.doWork(nowNs);
            } catch (Throwable t) {
                errorHandler.onError(t);
            }
        }
        return work;
    }

    /**
     * Sets the agent run at the end of every duty cycle, after all the others, with the cycle's {@code nowNs}:
     * a node that drives its provider hands it what its connections posted in the cycle
     * ({@link io.rdmaflux.verbs.RdmaProvider#transmitPosted}), so an answer posted in the cycle goes on the wire
     * before the next one starts. One at most; null removes it. Thread-safe; it runs from the next cycle on.
     */
    public void endOfCycle(@Nullable ProgressAgent agent) {
        endOfCycle = agent;
    }

    void enterThread() {
        progressThread = Thread.currentThread();
    }

    /** One duty cycle on the shared thread, marked so that {@link #close()} can wait for its end. */
    int sharedDutyCycle() {
        progressThread = Thread.currentThread();
        inSharedCycle = true;
        try {
            return dutyCycle();
        } finally {
            inSharedCycle = false;
            if (closed) {
                Thread w = closeWaiter;
                if (w != null) {
                    LockSupport.unpark(w);
                }
            }
        }
    }

    /**
     * SHARED, an engine that left the shared thread while others still run on it: waits until the thread
     * is no longer inside this engine's duty cycle. It started the cycle before {@link #closed} was set (a
     * later cycle sees it and does nothing), so once this returns no agent of this engine runs any more
     * and the caller may free what they use. The wait has no bound, as Agrona's {@code AgentRunner.close()}
     * has none for a DEDICATED thread: returning while a callback still runs in the cycle would let the
     * caller free memory the agents then touch. Every {@link #THREAD_END_TIMEOUT_MS} ms it logs a
     * WARNING naming the engine and the shared thread's top frames. Called by
     * {@link SharedProgressThread#leave}, never on the shared thread itself (that would wait for its own
     * cycle).
     *
     * @param shared the shared thread, for the warning's stack frames; null when unknown
     */
    void awaitSharedCycleEnd(@Nullable Thread shared) {
        if (!inSharedCycle) {
            return;
        }
        closeWaiter = Thread.currentThread();
        boolean interrupted = false;
        try {
            long waitedMs = 0;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(closeWarningMs);
            while (inSharedCycle) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    waitedMs += closeWarningMs;
                    LOG.log(System.Logger.Level.WARNING, stuckCycleWarning(shared, waitedMs));
                    deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(closeWarningMs);
                    continue;
                }
                LockSupport.parkNanos(this, left);
                if (Thread.interrupted()) {
                    // an interrupt must not end the wait (the caller would free what the cycle uses) nor
                    // turn it into a spin (park returns at once while the flag is set): kept for the end
                    interrupted = true;
                }
            }
        } finally {
            closeWaiter = null;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private String stuckCycleWarning(@Nullable Thread shared, long waitedMs) {
        return "rdmaflux: close() of engine '" + name + "' has waited " + waitedMs
            + " ms for the shared progress thread to leave the engine's duty cycle and goes on waiting: a callback on that"
            + " thread blocks (Reactor signals run on it; move blocking work off it with publishOn)" + frames(shared);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Stops the thread (DEDICATED) or leaves the shared thread (SHARED; the last engine to leave stops
     * it) and, unless called on that thread itself, returns only once no agent of this engine runs any
     * more, so the caller may free what the agents use: once the thread has ended (DEDICATED, or the last
     * SHARED engine), or once the shared thread is out of this engine's duty cycle (a SHARED engine that
     * is not the last). A callback that blocks on the progress thread holds close up for as long as it
     * blocks: Agrona's runner interrupts a DEDICATED thread and prints a line to
     * {@code System.err} every 5 s, and this engine logs a
     * WARNING with the thread's frames every {@link #THREAD_END_TIMEOUT_MS} ms; an interrupt of the
     * closing thread does not end that wait (its flag is set again on return). Idempotent: only the
     * first call waits, a later or concurrent one returns at once.
     */
    @Override
    public void close() {
        if (!closeCalled.compareAndSet(false, true)) {
            // one close does the waiting; a concurrent one must not take over its closeWaiter slot
            return;
        }
        closed = true;
        if (runner != null) {
            if (Thread.currentThread() == progressThread) {
                // closing from inside a duty cycle: the runner stops after this cycle returns
                Thread stopper = new Thread(runner::close, "rdmaflux-progress-" + name + "-closer");
                stopper.setDaemon(true);
                stopper.start();
            } else {
                runner.close();
                awaitEnd(thread);
            }
        } else if (mode == ThreadingMode.SHARED) {
            SharedProgressThread.leave(this);
        }
    }

    /**
     * Waits for a progress thread whose runner was closed to end. {@code AgentRunner.close()} returns as
     * soon as the runner says it is closed, which it does just before {@code run()} returns, or when the
     * closing thread is interrupted: without this the thread may still be alive when close returns. The
     * wait has no bound and outlasts interrupts (the flag is set again on return); every
     * {@link #THREAD_END_TIMEOUT_MS} ms it logs a WARNING with the thread's top frames.
     */
    static void awaitEnd(@Nullable Thread t) {
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        boolean interrupted = false;
        long waitedMs = 0;
        try {
            while (true) {
                try {
                    t.join(THREAD_END_TIMEOUT_MS);
                } catch (InterruptedException e) {
                    // Agrona's runner returns from close() when the closer is interrupted; this wait must not,
                    // or the caller frees what a callback still running on that thread uses
                    interrupted = true;
                    continue;
                }
                if (!t.isAlive()) {
                    return;
                }
                waitedMs += THREAD_END_TIMEOUT_MS;
                LOG.log(System.Logger.Level.WARNING, "rdmaflux: close() has waited " + waitedMs + " ms for progress thread '" + t.getName()
                    + "' to end and goes on waiting: a callback on that thread blocks (Reactor signals run on it; move blocking work"
                    + " off it with publishOn)" + frames(t));
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The top stack frames of {@code t}, one per line, for a warning. */
    private static String frames(@Nullable Thread t) {
        StringBuilder sb = new StringBuilder();
        if (t != null) {
            StackTraceElement[] frames = t.getStackTrace();
            for (int i = 0; i < Math.min(frames.length, 8); i++) {
                sb.append("\n\tat ").append(frames[i]);
            }
        }
        return sb.toString();
    }

    /** Tests: how often a close waiting for the shared thread's duty cycle warns, in ms (default {@value #THREAD_END_TIMEOUT_MS}). */
    void closeWarningMs(long ms) {
        closeWarningMs = ms;
    }

    @Override
    public String toString() {
        return "ProgressEngine{" + name + ", " + mode + ", agents=" + schedule.size() + "}";
    }

    /**
     * An agent's place in this engine's duty cycle. An agent is visited every duty cycle unless it opted in
     * with {@link #signalDriven()}; then, once it did no work in 4 visits in a row, it is <em>cold</em>: a
     * busy duty cycle visits it only when signalled or when the rotation (one cold agent per cycle, in add order)
     * reaches it; an idle cycle visits it anyway. Thread-safe.
     */
    public interface Registration {
        /**
         * Work for the agent arrived from outside its own visits (a completion added to its CQ, a request
         * handed in from another thread): the next duty cycle visits it. Cheap (a volatile read and, when not
         * yet signalled, a release store); call it after publishing the work and before {@link #wake()}.
         */
        void signal();

        /**
         * Opts in to being skipped while cold: every work the agent can be handed from outside its own visits
         * comes with a {@link #signal()} (or it accepts the rotation's delay for what does not, such as a
         * timer). Until this is called the agent is visited every duty cycle.
         */
        void signalDriven();
    }

    /** Adapts the engine to an Agrona agent. */
    static final class EngineAgent implements Agent {
        private final ProgressEngine engine;
        private final String roleName;

        EngineAgent(ProgressEngine engine, String roleName) {
            this.engine = engine;
            this.roleName = roleName;
        }

        @Override
        public void onStart() {
            engine.enterThread();
        }

        @Override
        public int doWork() {
            ProgressIdleStrategy idle = engine.progressIdle;
            if (idle == null) {
                return engine.dutyCycle();
            }
            // wall time of a real thread's cycle, for the idle strategy only (not protocol time: no clock)
            long startNs = System.nanoTime();
            int work = engine.dutyCycle();
            if (work == 0) {
                idle.emptyCycleTook(System.nanoTime() - startNs);
            }
            return work;
        }

        @Override
        public String roleName() {
            return roleName;
        }
    }
}
