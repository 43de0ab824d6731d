package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.ThreadingMode;
import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.Test;

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
        AtomicBoolean closeReturned = new AtomicBoolean();
        BlockingAgent agent = new BlockingAgent(closeReturned::get);
        engine.add(agent);
        AtomicBoolean closerInterruptedAfter = new AtomicBoolean();
        Thread closer = new Thread(() -> {
            engine.close();
            closerInterruptedAfter.set(Thread.currentThread().isInterrupted());
            closeReturned.set(true);
        }, "closer-dedicated");
        try {
            engine.wake();
            assertTrue(agent.awaitBlocked(), "the progress thread never ran the agent");
            closer.start();
            closer.interrupt();
            closer.join(300);
            assertTrue(closer.isAlive(), "close returned on the interrupt while the callback still ran on the progress thread");
        } finally {
            agent.unblock();
            closer.join(20_000);
        }
        assertFalse(closer.isAlive(), "close never returned after the callback did");
        assertFalse(agent.leftAfterClose(), "close returned before the progress thread left the callback");
        assertTrue(closerInterruptedAfter.get(), "close sets the closing thread's interrupt flag again");
        assertNull(errors.get());
    }
}
