package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.ProgressAgent;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Which agents a duty cycle visits, at a cost that grows with the agents that have work, not with the
 * agents there are.
 *
 * <p>An agent is visited every cycle unless it opted in with
 * {@link ProgressEngine.Registration#signalDriven()}. A signal-driven agent is <em>hot</em> while it does
 * work and turns <em>cold</em> after {@link #coldAfter} visits in a row that did none, unless it says it may
 * not wait for a signal now ({@link ProgressAgent#mayWaitForSignal()}: it stays hot); a cold one is visited
 * only when
 * <ul>
 *   <li>it was {@linkplain ProgressEngine.Registration#signal() signalled} (it is hot again from that cycle),</li>
 *   <li>the rotation reaches it: each cycle that did work visits the next {@link #rotationSlice} cold agents in
 *       add order, so under load every agent is still visited at least once every
 *       {@code ceil(agents / rotationSlice)} cycles, or</li>
 *   <li>a cycle did no work at all and the last such sweep is at least {@link #idleSweepNs} old (0 in
 *       INVOKER mode, where every idle cycle sweeps, as every cycle visited every agent before): an engine
 *       does not go idle for long without having visited every agent.</li>
 * </ul>
 * So skipping is only ever a delay for work that reached a cold agent without a signal (a timer), bounded by
 * the rotation and the idle sweep.
 *
 * <p>Why: a node with hundreds of open connections ran every connection's duty cycle every time, so one active
 * connection among 256 open ones ran at 0.6 M 32 B msg/s against 12.7 M with one open (README "Rate with many
 * active connections"). This is an event loop's ready list (epoll's, or Netty's task queue fed by wake-ups):
 * the hot list plus the signalled agents, queued by the signaller. The signal queue is bounded; when it is
 * full, the next cycle scans every agent's flag instead, so no signal is lost.
 *
 * <p><b>Concurrency:</b> {@link #add}, {@link #remove} and {@link Slot#signalDriven()} under the schedule's
 * lock (copy-on-write arrays); {@link #run} on the progress thread; {@link Slot#signal()} from any thread.
 */
final class AgentSchedule {
    /**
     * Idle visits in a row after which a signal-driven agent is cold. Small, so that a connection waiting for its
     * next message (a round trip's few µs are some ten idle cycles) drops out of the idle loop: a loop that also
     * runs idle connections is longer, and a message that arrives waits half a loop on average before it is read.
     */
    static final int DEFAULT_COLD_AFTER = 4;
    /** Cold agents the rotation visits per cycle. */
    static final int DEFAULT_ROTATION_SLICE = 1;
    /** Threads: the least time between two idle cycles' visits of every cold agent, ns. */
    static final long DEFAULT_IDLE_SWEEP_NS = 1_000_000;
    /** Signalled agents queued between two cycles before the next cycle scans flags instead. */
    private static final int SIGNAL_QUEUE_CAPACITY = 4096;
    private static final Slot[] NONE = new Slot[0];

    private final int coldAfter;
    private final int rotationSlice;
    private final long idleSweepNs;
    /** Every slot in add order (rotation, sweeps). */
    private volatile Slot[] all = NONE;
    /** The slots visited every cycle, in add order. */
    private volatile Slot[] always = NONE;
    private final ManyToOneConcurrentArrayQueue<Slot> signalled = new ManyToOneConcurrentArrayQueue<>(SIGNAL_QUEUE_CAPACITY);
    /** A signal found the queue full: the next cycle scans every slot's flag. */
    private volatile boolean signalOverflow;

    // progress thread only
    private Slot[] hot = new Slot[16];
    private int hotCount;
    private int cursor;
    private long lastSweepNs;
    private boolean swept;
    private long cycle;

    AgentSchedule(int coldAfter, int rotationSlice, long idleSweepNs) {
        if (coldAfter < 1 || rotationSlice < 1 || idleSweepNs < 0) {
            throw new IllegalArgumentException("coldAfter (" + coldAfter + ") and rotationSlice (" + rotationSlice
                + ") must be at least 1, idleSweepNs (" + idleSweepNs + ") at least 0");
        }
        this.coldAfter = coldAfter;
        this.rotationSlice = rotationSlice;
        this.idleSweepNs = idleSweepNs;
    }

    /** Adds {@code agent}, visited every cycle until it opts in to signals. */
    synchronized Slot add(ProgressAgent agent) {
        Slot s = new Slot(agent);
        all = append(all, s);
        always = append(always, s);
        return s;
    }

    /** Removes the first slot of {@code agent}; false if it has none. */
    synchronized boolean remove(ProgressAgent agent) {
        for (Slot s : all) {
            if (s.agent == agent) {
                s.removed = true;
                all = without(all, s);
                always = without(always, s);
                return true;
            }
        }
        return false;
    }

    private synchronized void makeSignalDriven(Slot s) {
        if (s.removed || !s.everyCycle) {
            return;
        }
        s.everyCycle = false;
        always = without(always, s);
        // the progress thread takes it into its hot list through the signal queue
        s.signal();
    }

    int size() {
        return all.length;
    }

    /** Progress thread: one cycle's visits; returns the work they did. */
    int run(long nowNs, ErrorHandler errorHandler) {
        long c = ++cycle;
        int work = 0;
        for (Slot s : always) {
            work += visit(s, nowNs, errorHandler);
        }
        takeSignalled();
        int i = 0;
        while (i < hotCount) {
            Slot s = hot[i];
            if (!s.removed) {
                int w = visit(s, nowNs, errorHandler);
                work += w;
                if (w > 0 || s.idleVisits < coldAfter) {
                    i++;
                    continue;
                }
                if (!s.removed && !mayWait(s, errorHandler)) {
                    // it has work that comes unsignalled now (e.g. a ring to poll): hot for another coldAfter visits
                    s.idleVisits = 0;
                    i++;
                    continue;
                }
            }
            // cold or removed: the last (not yet visited this cycle) takes its place and is visited next
            s.hot = false;
            if (!s.removed && s.signalled) {
                // a signal raced the demotion: its signaller saw it hot and queued nothing (a Dekker pair with
                // Slot.signal on the volatile hot and signalled flags), so it stays hot
                s.hot = true;
                s.idleVisits = 0;
                i++;
                continue;
            }
            hot[i] = hot[--hotCount];
            hot[hotCount] = null;
        }
        Slot[] a = all;
        if (hotCount + always.length >= a.length) {
            // every agent was visited: none is cold (the common case with few connections, or all of them busy)
            return work;
        }
        // the rotation runs in busy cycles only: an idle loop (waiting for the next message) visits the agents that
        // can have work unsignalled and the hot ones, and leaves the cold ones to the idle sweep
        if (work > 0) {
            work += rotate(a, c, nowNs, errorHandler);
        }
        if (work == 0 && (!swept || nowNs - lastSweepNs >= idleSweepNs) && hotCount < a.length) {
            swept = true;
            lastSweepNs = nowNs;
            for (Slot s : a) {
                if (isCold(s) && s.visitedIn != c) {
                    work += visitCold(s, nowNs, errorHandler);
                }
            }
        }
        return work;
    }

    /** Visits the next {@link #rotationSlice} cold agents not yet visited in cycle {@code c}, in add order. @return their work */
    private int rotate(Slot[] a, long c, long nowNs, ErrorHandler errorHandler) {
        int work = 0;
        int rotated = 0;
        for (int k = 0; k < a.length && rotated < rotationSlice; k++) {
            if (cursor >= a.length) {
                cursor = 0;
            }
            Slot s = a[cursor++];
            if (isCold(s) && s.visitedIn != c) {
                rotated++;
                work += visitCold(s, nowNs, errorHandler);
            }
        }
        return work;
    }

    private static boolean isCold(Slot s) {
        return !s.hot && !s.everyCycle && !s.removed;
    }

    /** Visits a cold slot; one that did work joins the hot list. */
    private int visitCold(Slot s, long nowNs, ErrorHandler errorHandler) {
        int w = visit(s, nowNs, errorHandler);
        if (w > 0) {
            makeHot(s);
        }
        return w;
    }

    /** Moves the signalled slots into the hot list (the overflow case scans every slot's flag). */
    private void takeSignalled() {
        Slot s;
        while ((s = signalled.poll()) != null) {
            promote(s);
        }
        if (signalOverflow) {
            signalOverflow = false;
            for (Slot t : all) {
                if (t.signalled) {
                    promote(t);
                }
            }
        }
    }

    private void promote(Slot s) {
        // volatile: ordered before the visit's reads of what the signaller published
        SIGNALLED.setVolatile(s, false);
        if (!s.removed && !s.everyCycle) {
            makeHot(s);
        }
    }

    private void makeHot(Slot s) {
        s.idleVisits = 0;
        if (s.hot) {
            return;
        }
        s.hot = true;
        if (hotCount == hot.length) {
            hot = Arrays.copyOf(hot, hotCount * 2);
        }
        hot[hotCount++] = s;
    }

    private static boolean mayWait(Slot s, ErrorHandler errorHandler) {
        try {
            return s.agent.mayWaitForSignal();
        } catch (Throwable t) {
            errorHandler.onError(t);
            return false;
        }
    }

    private int visit(Slot s, long nowNs, ErrorHandler errorHandler) {
        s.visitedIn = cycle;
        if (s.signalled) {
            // a release store, no fence: a hot agent is visited again next cycle whatever the flag says, and the
            // demotion re-checks the flag after a volatile store of hot (cold agents are promoted through
            // promote, whose clear is volatile); a signal during the visit sets it again
            SIGNALLED.setRelease(s, false);
        }
        int w = 0;
        try {
            w = s.agent.doWork(nowNs);
        } catch (Throwable t) {
            errorHandler.onError(t);
        }
        if (w > 0) {
            s.idleVisits = 0;
        } else if (s.idleVisits < coldAfter) {
            s.idleVisits++;
        }
        return w;
    }

    /** Tests: whether {@code agent} is cold now (skipped by busy cycles until signalled or rotated to). */
    boolean isCold(ProgressAgent agent) {
        for (Slot s : all) {
            if (s.agent == agent) {
                return isCold(s);
            }
        }
        throw new IllegalArgumentException("agent " + agent.roleName() + " is not scheduled");
    }

    private static Slot[] append(Slot[] a, Slot s) {
        Slot[] b = Arrays.copyOf(a, a.length + 1);
        b[a.length] = s;
        return b;
    }

    private static Slot[] without(Slot[] a, Slot s) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == s) {
                Slot[] b = new Slot[a.length - 1];
                System.arraycopy(a, 0, b, 0, i);
                System.arraycopy(a, i + 1, b, i, a.length - i - 1);
                return b;
            }
        }
        return a;
    }

    private static final VarHandle SIGNALLED;

    static {
        try {
            SIGNALLED = MethodHandles.lookup().findVarHandle(Slot.class, "signalled", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** One agent's place in the schedule. */
    final class Slot implements ProgressEngine.Registration {
        final ProgressAgent agent;
        /** Set (and queued) by a signal, cleared by the progress thread when it takes it. */
        volatile boolean signalled;
        volatile boolean everyCycle = true;
        volatile boolean removed;
        /** Progress thread: visits in a row that did no work, up to coldAfter. */
        int idleVisits;
        /**
         * In the hot list. Written by the progress thread only; read by signallers, which queue nothing for a
         * hot slot (its next visit sees the flag), so a hot connection's completions cost a CAS, not a queue.
         */
        volatile boolean hot;
        /** Progress thread: the cycle of its last visit. */
        long visitedIn;

        Slot(ProgressAgent agent) {
            this.agent = agent;
        }

        @Override
        public void signal() {
            if (!signalled && SIGNALLED.compareAndSet(this, false, true) && !hot && !everyCycle
                && !AgentSchedule.this.signalled.offer(this)) {
                signalOverflow = true;
            }
        }

        @Override
        public void signalDriven() {
            makeSignalDriven(this);
        }
    }
}
