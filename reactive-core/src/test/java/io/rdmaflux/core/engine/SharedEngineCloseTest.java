package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.ThreadingMode;
import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A SHARED engine that is not the last one on the shared thread: its close returns only once the
 * thread is out of its duty cycle, so its owner may free what the agents use. The agent holds the
 * thread inside the cycle until the closing thread has either returned from close (the bug) or is
 * waiting in it (the fix); real threads, every wait bounded.
 */
class SharedEngineCloseTest {
    private static final long BOUND_NS = TimeUnit.SECONDS.toNanos(20);

    @Test
    void closeOfAnEngineThatIsNotTheLastWaitsForTheSharedThreadToLeaveItsDutyCycle() throws Exception {
        AtomicReference<Throwable> errors = new AtomicReference<>();
        ProgressEngine keeper = shared("keeper", errors);
        ProgressEngine closing = shared("closing", errors);
        CountDownLatch entered = new CountDownLatch(1);
        AtomicReference<Thread> closer = new AtomicReference<>();
        AtomicBoolean closeReturned = new AtomicBoolean();
        AtomicBoolean returnedWhileInCycle = new AtomicBoolean();
        AtomicBoolean ranAfterClose = new AtomicBoolean();
        AtomicBoolean closerSeen = new AtomicBoolean();
        closing.add(new ProgressAgent() {
            @Override
            public int doWork(long nowNs) {
                if (closeReturned.get()) {
                    ranAfterClose.set(true);
                }
                if (entered.getCount() == 0) {
                    return 0;
                }
                entered.countDown();
                // stay in the cycle until the closing thread is parked in close() or done with it
                long deadline = System.nanoTime() + BOUND_NS;
                while (System.nanoTime() - deadline < 0) {
                    Thread t = closer.get();
                    if (t != null) {
                        Thread.State s = t.getState();
                        if (s == Thread.State.TERMINATED || s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) {
                            closerSeen.set(true);
                            break;
                        }
                    }
                    Thread.onSpinWait();
                }
                returnedWhileInCycle.set(closeReturned.get());
                return 1;
            }

            @Override
            public String roleName() {
                return "holds-the-cycle";
            }
        });
        try {
            closing.wake();
            assertTrue(entered.await(20, TimeUnit.SECONDS), "the shared thread never ran the engine's agent");
            Thread t = new Thread(() -> {
                closing.close();
                closeReturned.set(true);
            }, "closer");
            closer.set(t);
            t.start();
            t.join(TimeUnit.NANOSECONDS.toMillis(2 * BOUND_NS));
            assertFalse(t.isAlive(), "close never returned");
            assertTrue(closerSeen.get(), "the agent never saw the closing thread wait or end (nothing was tested)");
            assertFalse(returnedWhileInCycle.get(), "close returned while the shared thread was still inside the engine's duty cycle");
            // the keeper still runs on the shared thread; the closed engine's agent no more
            CompletableFuture<Thread> ran = new CompletableFuture<>();
            keeper.execute(() -> ran.complete(Thread.currentThread()));
            keeper.wake();
            assertEquals("rdmaflux-progress-shared", ran.get(20, TimeUnit.SECONDS).getName());
            assertFalse(ranAfterClose.get(), "the closed engine's agent ran after close returned");
        } finally {
            closing.close();
            keeper.close();
        }
        assertNull(errors.get());
    }

    /**
     * A callback blocking in the cycle past the warning period: close keeps waiting (returning would let
     * the node free memory the agent then touches) and logs a WARNING naming the engine and the blocking
     * frames; it returns once the callback does. Before, it gave up after 5 s.
     */
    @Test
    void closeOutwaitsACallbackBlockingInTheCycleAndWarnsWhileItWaits() throws Exception {
        AtomicReference<Throwable> errors = new AtomicReference<>();
        ProgressEngine keeper = shared("keeper-blocked", errors);
        ProgressEngine closing = shared("closing-blocked", errors);
        closing.closeWarningMs(1);
        AtomicBoolean closeReturned = new AtomicBoolean();
        BlockingAgent agent = new BlockingAgent(closeReturned::get);
        closing.add(agent);
        java.util.logging.Logger jul = java.util.logging.Logger.getLogger(ProgressEngine.class.getName());
        CompletableFuture<String> warning = new CompletableFuture<>();
        java.util.logging.Handler capture = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                if (r.getLevel() == java.util.logging.Level.WARNING) {
                    warning.complete(r.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        boolean parentHandlers = jul.getUseParentHandlers();
        jul.setUseParentHandlers(false);
        jul.addHandler(capture);
        AtomicBoolean closerInterruptedAfter = new AtomicBoolean();
        Thread t = new Thread(() -> {
            closing.close();
            closerInterruptedAfter.set(Thread.currentThread().isInterrupted());
            closeReturned.set(true);
        }, "closer-blocked");
        try {
            closing.wake();
            assertTrue(agent.awaitBlocked(), "the shared thread never ran the engine's agent");
            t.start();
            String w = warning.get(20, TimeUnit.SECONDS);
            assertTrue(w.contains("close() of engine 'closing-blocked' has waited") && w.contains("goes on waiting"), w);
            assertTrue(w.contains("CountDownLatch.await"), "the warning shows where the shared thread blocks: " + w);
            assertFalse(closeReturned.get(), "close returned while a callback still ran in the engine's duty cycle");
            assertTrue(t.isAlive());
            // an interrupt neither ends the wait nor turns it into a spin (park returns at once while the
            // flag is set): over 300 ms the parked closer uses next to no CPU, a spinning one most of it
            closing.closeWarningMs(60_000);
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            t.interrupt();
            long cpuBefore = mx.getThreadCpuTime(t.getId());
            t.join(300);
            long cpuNs = mx.getThreadCpuTime(t.getId()) - cpuBefore;
            assertFalse(closeReturned.get(), "an interrupt ended close's wait while the callback still ran");
            assertTrue(cpuNs < 100_000_000L, "the interrupted closer spun: " + cpuNs / 1_000_000 + " ms of CPU in 300 ms");
            agent.unblock();
            t.join(20_000);
            assertFalse(t.isAlive(), "close never returned after the callback did");
            assertFalse(agent.leftAfterClose(), "close returned before the cycle ended");
            assertTrue(closerInterruptedAfter.get(), "close sets the closing thread's interrupt flag again");
        } finally {
            agent.unblock();
            t.join(20_000);
            jul.removeHandler(capture);
            jul.setUseParentHandlers(parentHandlers);
            closing.close();
            keeper.close();
        }
        assertNull(errors.get());
    }

    @Test
    void anEngineClosedFromTheSharedThreadInItsOwnCycleDoesNotWaitForItself() throws Exception {
        AtomicReference<Throwable> errors = new AtomicReference<>();
        ProgressEngine keeper = shared("keeper-self", errors);
        ProgressEngine closing = shared("closing-self", errors);
        CountDownLatch inTask = new CountDownLatch(1);
        CompletableFuture<Void> closed = new CompletableFuture<>();
        AtomicReference<Thread> shared = new AtomicReference<>();
        try {
            closing.execute(() -> {
                shared.set(Thread.currentThread());
                inTask.countDown();
                closing.close();
                closed.complete(null);
            });
            closing.wake();
            assertTrue(inTask.await(20, TimeUnit.SECONDS), "the task never ran");
            // a close that waited for its own cycle would park the shared thread on the engine
            boolean parkedOnItself = false;
            long deadline = System.nanoTime() + BOUND_NS;
            while (!closed.isDone() && System.nanoTime() - deadline < 0) {
                if (java.util.concurrent.locks.LockSupport.getBlocker(shared.get()) == closing) {
                    parkedOnItself = true;
                    break;
                }
                Thread.onSpinWait();
            }
            closed.get(20, TimeUnit.SECONDS);
            assertFalse(parkedOnItself, "close on the shared thread waited for its own duty cycle");
            assertTrue(closing.isClosed());
        } finally {
            closing.close();
            keeper.close();
        }
        assertNull(errors.get());
    }

    private static ProgressEngine shared(String name, AtomicReference<Throwable> errors) {
        return new ProgressEngine(name, ThreadingMode.SHARED, SystemNanoClock.INSTANCE, ProgressIdleStrategy.backoff(), errors::set);
    }
}
