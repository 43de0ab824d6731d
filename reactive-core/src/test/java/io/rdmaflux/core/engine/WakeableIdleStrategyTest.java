package io.rdmaflux.core.engine;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WakeableIdleStrategyTest {

    @Test
    void wakeEndsAParkThatWouldOtherwiseLastAnHour() throws InterruptedException {
        long hour = TimeUnit.HOURS.toNanos(1);
        WakeableIdleStrategy idle = new WakeableIdleStrategy(new BackoffIdleStrategy(0, 0, hour, hour));
        Thread t = new Thread(() -> idle.idle(0), "wakeable-idle-test");
        t.start();
        while (!idle.isIdling() && t.isAlive()) {
            Thread.onSpinWait();
        }
        idle.wake();
        // a wake that comes before the park leaves a permit, so the park returns at once either way
        t.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(t.isAlive(), "the idling thread was not woken");
        assertFalse(idle.isIdling());
    }

    @Test
    void wakeWithNoIdlingThreadDoesNothingAndWorkIsPassedOn() {
        AtomicInteger idles = new AtomicInteger();
        AtomicInteger resets = new AtomicInteger();
        IdleStrategy counting = new IdleStrategy() {
            @Override
            public void idle(int workCount) {
                assertTrue(workCount > 0, "idle(0) is passed on as idle()");
                resets.incrementAndGet();
            }

            @Override
            public void idle() {
                idles.incrementAndGet();
            }

            @Override
            public void reset() {
                resets.incrementAndGet();
            }
        };
        WakeableIdleStrategy idle = new WakeableIdleStrategy(counting);
        idle.wake();
        idle.idle(0);
        idle.idle(3);
        idle.idle();
        assertEquals(2, idles.get());
        assertEquals(1, resets.get());
        assertFalse(idle.isIdling());
        assertTrue(idle.alias().startsWith("wakeable-"));
    }
}
