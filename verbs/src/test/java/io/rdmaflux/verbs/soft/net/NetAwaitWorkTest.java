package io.rdmaflux.verbs.soft.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.AwaitWorkChecks;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code RdmaProvider.awaitWork}/{@code wakeup} on the IP fabric: an INVOKER provider with nothing to
 * do blocks in its socket selector, and an arriving frame or another thread's wakeup ends the block.
 * Every wait here is an hour long, so a wake-up that does not happen fails the test (by the join
 * bound) instead of passing late; no test depends on how fast anything is.
 */
@ExtendWith(NoLeaksExtension.class)
class NetAwaitWorkTest {
    private static final long HOUR_NS = TimeUnit.HOURS.toNanos(1);
    private static final long JOIN_BOUND_MS = 30_000;

    private final NetHosts hosts = new NetHosts();

    @AfterEach
    void close() {
        hosts.close();
    }

    @Test
    void anIdleProviderBlockedInItsSelectorWakesWhenAFrameArrives() throws InterruptedException {
        SoftProvider a = hosts.host("a");
        SoftProvider b = hosts.host("b");
        ProtectionDomain pa = a.devices().get(0).allocateProtectionDomain();
        ProtectionDomain pb = b.devices().get(0).allocateProtectionDomain();
        CompletionQueue ca = a.devices().get(0).createCompletionQueue(16);
        CompletionQueue cb = b.devices().get(0).createCompletionQueue(16);
        // TCP loses nothing: the retry timer is only for a dead peer. The default 1 ms x 7 would fail a's send
        // whenever b's thread takes over 8 ms to be scheduled after its selector wakes (seen on a loaded machine)
        QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, a.devices().get(0).port(1)).cq(ca)
            .retryTimeoutNs(TimeUnit.MILLISECONDS.toNanos(JOIN_BOUND_MS)).build());
        QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, b.devices().get(0).port(1)).cq(cb).build());
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        MemoryRegion ma = pa.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion mb = pb.allocateMemory(64, Access.LOCAL_WRITE);
        assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(1).sge(mb, 0, 64)));

        // b is driven by its own thread, which blocks for up to an hour whenever a pass finds nothing
        AtomicReference<WcStatus> received = new AtomicReference<>();
        AtomicReference<String> receivedDetail = new AtomicReference<>();
        AtomicInteger waitsEntered = new AtomicInteger();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread driver = new Thread(() -> {
            try {
                while (received.get() == null) {
                    if (b.progress(hosts.clock.nanoTime()) == 0) {
                        waitsEntered.incrementAndGet();
                        b.awaitWork(HOUR_NS);
                    }
                    cb.poll(1, wc -> {
                        receivedDetail.set(wc.toString());
                        received.set(wc.status());
                    });
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "await-work-test-b");
        driver.start();
        // a sends once b is about to block (or blocked) for an hour: only the frame can end that wait
        long enteredBy = hosts.clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(JOIN_BOUND_MS);
        while (waitsEntered.get() == 0 && driver.isAlive()) {
            assertTrue(hosts.clock.nanoTime() - enteredBy < 0, "b's driver never found itself idle");
            Thread.onSpinWait();
        }
        assertTrue(qa.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(ma, 0, 8)));
        long end = hosts.clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(JOIN_BOUND_MS);
        while (driver.isAlive() && hosts.clock.nanoTime() - end < 0) {
            a.progress(hosts.clock.nanoTime());
        }
        driver.join(JOIN_BOUND_MS);
        assertFalse(driver.isAlive(), "b's driver stayed blocked in its selector although a frame arrived");
        assertNull(failed.get());
        assertEquals(WcStatus.SUCCESS, received.get(), receivedDetail::get);
        // a's send completes once b's ACK arrives, which b sends from the pass that received the frame
        hosts.runUntil(() -> ca.poll(1, wc -> assertEquals(WcStatus.SUCCESS, wc.status(), () -> "a's send: " + wc)) == 1);
    }

    @Test
    void wakeupFromAnotherThreadEndsTheWaitEvenIfItCameFirst() throws InterruptedException {
        // a wakeup before the wait leaves a permit, as Selector.wakeup does
        AwaitWorkChecks.wakeupEndsTheWaitEvenIfItCameFirst(hosts.host("b"), "await-work-test-wakeup");
    }

    @Test
    void providersThatCannotWaitReturnFalseAtOnce() {
        SoftProvider net = hosts.host("n");
        assertFalse(net.awaitWork(999_999), "a wait under 1 ms cannot be timed by a Selector: the caller parks instead");
        try (SoftProvider mem = SoftProvider.builder().name("await-mem").fabric(SoftFabric.mem("await-work-test")).build();
             SoftProvider dedicated = NetProviders.builder(NetTransportConfig.loopback()).name("await-dedicated").build()) {
            assertFalse(mem.awaitWork(HOUR_NS), "a DEDICATED provider's own thread drives it (in-JVM fabric)");
            assertFalse(dedicated.awaitWork(HOUR_NS), "a DEDICATED provider's own thread drives it; nobody else may block in it");
            mem.wakeup();
            dedicated.wakeup();
        }
    }
}
