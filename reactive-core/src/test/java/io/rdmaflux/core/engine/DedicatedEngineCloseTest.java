package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.ThreadingMode;
import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A DEDICATED engine's close when the closing thread is interrupted while a callback blocks on the
 * progress thread: Agrona's {@code AgentRunner.close()} returns on that interrupt, and the engine must
 * still not return before the thread ended (its owner frees what the agents use once close returns).
 * Real threads; 300 ms of the wait is the window in which close must not return.
 */
class DedicatedEngineCloseTest {

    @Test
    void anInterruptedCloseStillWaitsForTheProgressThreadToEnd() throws Exception {
        AtomicReference<Throwable> errors = new AtomicReference<>();
        ProgressEngine engine = new ProgressEngine("dedicated-blocked", ThreadingMode.DEDICATED, SystemNanoClock.INSTANCE,
            ProgressIdleStrategy.backoff(), errors::set);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch unblock = new CountDownLatch(1);
        AtomicBoolean closeReturned = new AtomicBoolean();
        AtomicBoolean returnedWhileBlocked = new AtomicBoolean();
        engine.add(new ProgressAgent() {
            @Override
            public int doWork(long nowNs) {
                if (entered.getCount() == 0) {
                    return 0;
                }
                entered.countDown();
                // a callback that Agrona's interrupts do not end, like one stuck in user code
                while (unblock.getCount() > 0) {
                    try {
                        unblock.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        // keeps blocking
                    }
                }
                returnedWhileBlocked.set(closeReturned.get());
                return 1;
            }

            @Override
            public String roleName() {
                return "blocks-in-a-callback";
            }
        });
        AtomicBoolean closerInterruptedAfter = new AtomicBoolean();
        Thread closer = new Thread(() -> {
            engine.close();
            closerInterruptedAfter.set(Thread.currentThread().isInterrupted());
            closeReturned.set(true);
        }, "closer-dedicated");
        try {
            engine.wake();
            assertTrue(entered.await(20, TimeUnit.SECONDS), "the progress thread never ran the agent");
            closer.start();
            closer.interrupt();
            closer.join(300);
            assertTrue(closer.isAlive(), "close returned on the interrupt while the callback still ran on the progress thread");
        } finally {
            unblock.countDown();
            closer.join(20_000);
        }
        assertFalse(closer.isAlive(), "close never returned after the callback did");
        assertFalse(returnedWhileBlocked.get(), "close returned before the progress thread left the callback");
        assertTrue(closerInterruptedAfter.get(), "close sets the closing thread's interrupt flag again");
        assertNull(errors.get());
    }
}
