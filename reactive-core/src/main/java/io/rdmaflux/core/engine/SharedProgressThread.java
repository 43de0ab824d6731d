package io.rdmaflux.core.engine;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.jspecify.annotations.Nullable;

import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The JVM-wide thread of SHARED-mode engines, {@code rdmaflux-progress-shared}: it starts with the
 * first engine that joins and stops when the last one leaves, so no thread outlives the nodes. The
 * last {@link #leave} returns once the thread has ended, any other once the thread is out of the
 * leaving engine's duty cycle; neither waits when it runs on that thread.
 */
final class SharedProgressThread implements Agent {
    private static final Object LOCK = new Object();
    private static @Nullable AgentRunner runner;
    private static @Nullable Thread thread;
    private static volatile @Nullable SharedProgressThread instance;
    private final ProgressIdleStrategy idle = ProgressIdleStrategy.backoff();

    private final CopyOnWriteArrayList<ProgressEngine> engines = new CopyOnWriteArrayList<>();
    /**
     * {@link #engines} as an array, replaced (under LOCK) whenever the list changes: the duty cycle loops
     * over it without the list's iterator, an allocation per cycle (some 10^5 a second while it spins).
     */
    private volatile ProgressEngine[] cycle = new ProgressEngine[0];

    static void join(ProgressEngine engine) {
        synchronized (LOCK) {
            if (instance == null) {
                SharedProgressThread agent = new SharedProgressThread();
                AgentRunner r = new AgentRunner(agent.idle, Throwable::printStackTrace, null, agent);
                instance = agent;
                runner = r;
                thread = AgentRunner.startOnThread(r, t -> {
                    Thread th = new Thread(t);
                    th.setDaemon(true);
                    return th;
                });
            }
            instance.engines.add(engine);
            instance.cycle = instance.engines.toArray(new ProgressEngine[0]);
        }
    }

    static void leave(ProgressEngine engine) {
        AgentRunner toClose = null;
        Thread toJoin = null;
        Thread shared;
        synchronized (LOCK) {
            shared = thread;
            boolean removed = instance != null && instance.engines.remove(engine);
            if (removed) {
                instance.cycle = instance.engines.toArray(new ProgressEngine[0]);
            }
            if (removed && instance.engines.isEmpty()) {
                toClose = runner;
                toJoin = thread;
                runner = null;
                thread = null;
                instance = null;
            }
        }
        if (toClose == null) {
            // the thread goes on with the other engines but may be inside this one's cycle now (or start
            // it from the list it iterates): the caller frees what the cycle uses once this returns. On the
            // thread itself no other cycle runs, and its own one goes on by design (a close from a callback)
            if (Thread.currentThread() != shared) {
                engine.awaitSharedCycleEnd(shared);
            }
        } else {
            if (Thread.currentThread() == toJoin) {
                // leaving from inside a duty cycle: close from another thread, the runner waits for this one
                AgentRunner r = toClose;
                Thread closer = new Thread(r::close, "rdmaflux-progress-shared-closer");
                closer.setDaemon(true);
                closer.start();
            } else {
                toClose.close();
                ProgressEngine.awaitEnd(toJoin);
            }
        }
    }

    static void wake() {
        SharedProgressThread t = instance;
        if (t != null) {
            t.idle.wake();
        }
    }

    @Override
    public int doWork() {
        int work = 0;
        for (ProgressEngine e : cycle) {
            work += e.sharedDutyCycle();
        }
        return work;
    }

    @Override
    public String roleName() {
        return "rdmaflux-progress-shared";
    }
}
