package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.AwaitWorkChecks;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code RdmaProvider.awaitWork}/{@code wakeup} on the in-JVM fabric: an INVOKER provider with
 * nothing to do parks, and frames pushed to its NIC by another thread, or a wakeup, end the park.
 * Every wait here is an hour long, so a wake-up that does not happen fails the test (by the join
 * bound) instead of passing late; no test depends on how fast anything is.
 */
@ExtendWith(NoLeaksExtension.class)
class MemAwaitWorkTest {
    private static final long HOUR_NS = AwaitWorkChecks.HOUR_NS;
    private static final long JOIN_BOUND_MS = AwaitWorkChecks.JOIN_BOUND_MS;

    private final SoftTwoNodes soft = SoftTwoNodes.create();

    @AfterEach
    void close() {
        soft.close();
    }

    /** An RC QP on each host's first port, connected, b with one receive posted into 64 bytes. */
    private record Pair(CompletionQueue ca, CompletionQueue cb, QueuePair qa, MemoryRegion ma) {
        static Pair connect(SoftProvider a, SoftProvider b) {
            ProtectionDomain pa = a.devices().get(0).allocateProtectionDomain();
            ProtectionDomain pb = b.devices().get(0).allocateProtectionDomain();
            CompletionQueue ca = a.devices().get(0).createCompletionQueue(16);
            CompletionQueue cb = b.devices().get(0).createCompletionQueue(16);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(a, ca).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(b, cb).build());
            SoftTwoNodes.connectRc(qa, qb);
            MemoryRegion mb = pb.allocateMemory(64, Access.LOCAL_WRITE);
            assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(1).sge(mb, 0, 64)));
            return new Pair(ca, cb, qa, pa.allocateMemory(64, Access.LOCAL_WRITE));
        }
    }

    @Test
    void anIdleProviderParkedInAwaitWorkWakesWhenAFrameIsPushedToIt() throws InterruptedException {
        SoftProvider a = soft.a();
        SoftProvider b = soft.b();
        Pair rc = Pair.connect(a, b);

        // b is driven by its own thread, which parks for up to an hour whenever a pass finds nothing
        AtomicReference<WcStatus> received = new AtomicReference<>();
        AtomicInteger waitsEntered = new AtomicInteger();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread driver = new Thread(() -> {
            try {
                while (received.get() == null) {
                    if (b.progress(soft.clock().nanoTime()) == 0) {
                        waitsEntered.incrementAndGet();
                        assertTrue(b.awaitWork(HOUR_NS), "an INVOKER provider on the mem fabric waits");
                    }
                    rc.cb().poll(1, wc -> received.set(wc.status()));
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "mem-await-work-test-b");
        driver.start();
        long enteredBy = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(JOIN_BOUND_MS);
        while (waitsEntered.get() == 0 && driver.isAlive()) {
            assertTrue(System.nanoTime() - enteredBy < 0, "b's driver never found itself idle");
            Thread.onSpinWait();
        }
        // a's pass pushes the frame to b's inbox: only that can end b's hour-long park
        assertTrue(rc.qa().postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(rc.ma(), 0, 8)));
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(JOIN_BOUND_MS);
        while (driver.isAlive() && System.nanoTime() - end < 0) {
            a.progress(soft.clock().nanoTime());
        }
        driver.join(JOIN_BOUND_MS);
        assertFalse(driver.isAlive(), "b's driver stayed parked although a frame was pushed to it");
        assertNull(failed.get());
        assertEquals(WcStatus.SUCCESS, received.get());
        soft.runUntil(() -> rc.ca().poll(1, wc -> assertEquals(WcStatus.SUCCESS, wc.status())) == 1, 1_000, 100_000);
    }

    @Test
    void wakeupFromAnotherThreadEndsTheWaitEvenIfItCameFirst() throws InterruptedException {
        AwaitWorkChecks.wakeupEndsTheWaitEvenIfItCameFirst(soft.b(), "mem-await-work-test-wakeup");
    }

    @Test
    void aWaitEndsInTimeForTheRetransmissionTimerOfAnUnacknowledgedFrame() throws InterruptedException {
        SoftProvider a = soft.a();
        SoftProvider b = soft.b();
        Pair rc = Pair.connect(a, b);
        assertTrue(rc.qa().postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(rc.ma(), 0, 8)));
        // a sends; b is never driven here, so no ACK comes and a's retransmission timer is armed
        for (int i = 0; i < 10 && a.progress(soft.clock().nanoTime()) > 0; i++) {
            Thread.onSpinWait();
        }
        AtomicReference<Boolean> waited = new AtomicReference<>();
        Thread t = new Thread(() -> waited.set(a.awaitWork(HOUR_NS)), "mem-await-work-test-timer");
        t.start();
        t.join(JOIN_BOUND_MS);
        assertFalse(t.isAlive(), "the wait ignored the ACK retry deadline of the unacknowledged frame");
        assertEquals(Boolean.TRUE, waited.get());
        // let the exchange finish so that nothing is left in flight at close
        soft.runUntil(() -> rc.ca().poll(1, wc -> assertEquals(WcStatus.SUCCESS, wc.status())) == 1, 1_000, 100_000);
        assertEquals(1, rc.cb().poll(1, wc -> assertEquals(WcStatus.SUCCESS, wc.status())));
    }

    @Test
    void aClosedProviderDoesNotWait() {
        SoftProvider b = soft.b();
        b.close();
        assertFalse(b.awaitWork(HOUR_NS));
    }
}
