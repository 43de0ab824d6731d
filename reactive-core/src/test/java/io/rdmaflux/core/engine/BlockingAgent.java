package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.ProgressAgent;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * A progress agent whose first duty cycle blocks, like a user callback stuck on the progress thread,
 * until {@link #unblock()}: interrupts do not end it (they are what a closer's runner sends), and 20 s
 * is the bound. It records whether {@code closeReturned} was already true when it left the cycle.
 */
final class BlockingAgent implements ProgressAgent {
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch unblock = new CountDownLatch(1);
    private final AtomicBoolean leftAfterClose = new AtomicBoolean();
    private final BooleanSupplier closeReturned;

    /** @param closeReturned whether the close under test has returned, read as the cycle ends */
    BlockingAgent(BooleanSupplier closeReturned) {
        this.closeReturned = closeReturned;
    }

    @Override
    public int doWork(long nowNs) {
        if (entered.getCount() == 0) {
            return 0;
        }
        entered.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (unblock.getCount() > 0 && System.nanoTime() - deadline < 0) {
            try {
                unblock.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                // keeps blocking, as code stuck elsewhere would
            }
        }
        leftAfterClose.set(closeReturned.getAsBoolean());
        return 1;
    }

    /** Waits (at most 20 s) until the agent blocks in its cycle; false if it never did. */
    boolean awaitBlocked() throws InterruptedException {
        return entered.await(20, TimeUnit.SECONDS);
    }

    void unblock() {
        unblock.countDown();
    }

    /** Whether the close under test had returned when the cycle ended (it must not have). */
    boolean leftAfterClose() {
        return leftAfterClose.get();
    }

    @Override
    public String roleName() {
        return "blocks-in-a-callback";
    }
}
