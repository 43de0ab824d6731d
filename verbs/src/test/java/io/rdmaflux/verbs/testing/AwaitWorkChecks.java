package io.rdmaflux.verbs.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.RdmaProvider;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code RdmaProvider.awaitWork}/{@code wakeup} contract every fabric that can wait keeps, checked
 * the same way for each: waits are an hour long, so a wake-up that does not happen fails by the join
 * bound instead of passing late.
 */
public final class AwaitWorkChecks {
    public static final long HOUR_NS = TimeUnit.HOURS.toNanos(1);
    public static final long JOIN_BOUND_MS = 30_000;

    private AwaitWorkChecks() {
    }

    /**
     * A wakeup before the wait makes the next wait return at once; a wakeup from another thread ends a
     * wait in progress.
     */
    public static void wakeupEndsTheWaitEvenIfItCameFirst(RdmaProvider provider, String threadName) throws InterruptedException {
        provider.wakeup();
        assertTrue(provider.awaitWork(HOUR_NS));
        AtomicReference<Boolean> waited = new AtomicReference<>();
        Thread t = new Thread(() -> waited.set(provider.awaitWork(HOUR_NS)), threadName);
        t.start();
        provider.wakeup();
        t.join(JOIN_BOUND_MS);
        assertFalse(t.isAlive(), "wakeup() did not end the wait");
        assertEquals(Boolean.TRUE, waited.get());
    }
}
