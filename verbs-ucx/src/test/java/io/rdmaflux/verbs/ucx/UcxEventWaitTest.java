package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.ucx.UcxTestSupport.UcxPair;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The event-fd idle wait ({@link UcxEventWait}) through the provider's {@code awaitWork}/{@code wakeup}:
 * what ends a wait (a frame arriving, {@code wakeup()}, the deadline), what makes it return at once,
 * and the {@code wait}/{@code cm-host} options. No timed assertions: the joins' bounds only keep a
 * broken wait from hanging the build.
 */
@ExtendWith(UcxTestSupport.Checks.class)
class UcxEventWaitTest {
    private static final long LONG_WAIT_NS = TimeUnit.SECONDS.toNanos(30);

    @AfterEach
    void end() {
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().startsWith("rdmaflux-ucx-wait-")),
            "the event wait's timer thread must stop when its provider closes");
    }

    private static UcxProvider invoker(String tls, UcxProvider.Wait wait) {
        return UcxProvider.builder().tls(tls).threadingMode(ThreadingMode.INVOKER).clock(new SystemNanoClock()).idleWait(wait).build();
    }

    @Test
    void wakeupFromAnotherThreadEndsAWait() throws Exception {
        try (UcxProvider p = invoker("tcp", UcxProvider.Wait.EVENT)) {
            p.progress(System.nanoTime());
            CompletableFuture<Boolean> waited = CompletableFuture.supplyAsync(() -> p.awaitWork(LONG_WAIT_NS));
            while (p.eventWaits(0) == 0 && !waited.isDone()) {
                Thread.onSpinWait(); // until the waiter blocks (or returned: UCX had events pending at arm)
            }
            p.wakeup();
            assertTrue(waited.get(20, TimeUnit.SECONDS), "a wait ended by wakeup() reports that it waited");
        }
    }

    @Test
    void aWakeupWithNoWaitInProgressMakesTheNextReturnAtOnce() throws Exception {
        try (UcxProvider p = invoker("sm,self", UcxProvider.Wait.EVENT)) {
            p.progress(System.nanoTime());
            p.wakeup();
            assertTrue(CompletableFuture.supplyAsync(() -> p.awaitWork(LONG_WAIT_NS)).get(20, TimeUnit.SECONDS));
        }
    }

    @Test
    void theDeadlineEndsAnIdleWait() throws Exception {
        try (UcxProvider p = invoker("tcp", UcxProvider.Wait.EVENT)) {
            p.progress(System.nanoTime());
            for (int i = 0; i < 3; i++) {
                assertTrue(CompletableFuture.supplyAsync(() -> p.awaitWork(TimeUnit.MILLISECONDS.toNanos(5))).get(20, TimeUnit.SECONDS));
                p.progress(System.nanoTime());
            }
        }
    }

    @Test
    void aFrameArrivingEndsTheReceiversWait() throws Exception {
        for (String tls : new String[] {"tcp", "sm,self"}) {
            try (UcxPair p = UcxPair.open(tls)) {
                MemoryRegion src = p.pa.allocateMemory(64, Access.LOCAL_WRITE);
                MemoryRegion dst = p.pb.allocateMemory(64, Access.LOCAL_WRITE);
                // one exchange first, so both endpoints are connected (UCX's wireup) before B waits
                exchange(p, src, dst);
                UcxProvider b = p.hostB();
                assertTrue(p.qb.postReceive(new ReceiveWorkRequest().wrId(1).sge(dst, 0, 64)));
                long waitsBefore = b.eventWaits(0);
                CompletableFuture<Boolean> waited;
                do { // until B really blocks (a wait returns at once while UCX has events pending at arm())
                    b.progress(System.nanoTime());
                    waited = CompletableFuture.supplyAsync(() -> b.awaitWork(LONG_WAIT_NS));
                    while (b.eventWaits(0) == waitsBefore && !waited.isDone()) {
                        Thread.onSpinWait();
                    }
                } while (b.eventWaits(0) == waitsBefore);
                assertTrue(p.qa.postSend(new SendWorkRequest().wrId(2).sge(src, 0, 64)));
                while (!waited.isDone()) {
                    p.hostA().progress(System.nanoTime()); // A sends; B is woken by the frame, not by a wakeup()
                }
                assertTrue(waited.get(20, TimeUnit.SECONDS), tls);
                WorkCompletion[] got = new WorkCompletion[1];
                p.drive(() -> {
                    p.cb.poll(1, wc -> got[0] = wc.copy());
                    p.ca.poll(1, wc -> { });
                    return got[0] != null;
                }, tls + ": the receive's completion at B");
                assertTrue(got[0] != null && got[0].isSuccess(), () -> tls + ": " + got[0]);
                for (int i = 0; i < 10_000; i++) {
                    p.progress(); // the ACK of the SEND, so nothing is in flight at close
                    p.ca.poll(1, wc -> { });
                }
            }
        }
    }

    private static void exchange(UcxPair p, MemoryRegion src, MemoryRegion dst) {
        assertTrue(p.qb.postReceive(new ReceiveWorkRequest().wrId(9).sge(dst, 0, 64)));
        assertTrue(p.qa.postSend(new SendWorkRequest().wrId(10).sge(src, 0, 64)));
        int[] done = new int[1];
        p.drive(() -> {
            p.ca.poll(1, wc -> done[0]++);
            p.cb.poll(1, wc -> done[0]++);
            return done[0] >= 2;
        }, "the first exchange");
        assertEquals(2, done[0], "the first exchange did not complete");
    }

    @Test
    void withWaitParkOrDedicatedThreadingAwaitWorkReturnsAtOnce() {
        try (UcxProvider p = invoker("sm,self", UcxProvider.Wait.PARK)) {
            assertFalse(p.awaitWork(LONG_WAIT_NS));
            assertEquals(UcxProvider.Wait.PARK, p.idleWait());
        }
        try (UcxProvider p = UcxProvider.builder().tls("sm,self").build()) {
            assertFalse(p.awaitWork(LONG_WAIT_NS), "a DEDICATED provider's own thread drives it: nobody else may wait in it");
        }
        try (UcxProvider p = invoker("sm,self", UcxProvider.Wait.EVENT)) {
            assertFalse(p.awaitWork(UcxEventWait.MIN_WAIT_NS - 1), "shorter than a wake-up through the fd: the caller spins or parks");
        }
    }

    @Test
    void optionsNameBadValues() {
        VerbsException wait = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("wait", "spin")));
        assertTrue(wait.getMessage().contains("wait='spin'") && wait.getMessage().contains("'event'"), wait.getMessage());
        VerbsException host = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("cm-host", "127.0.0.1")));
        assertTrue(host.getMessage().contains("cm=tcp") && host.getMessage().contains("127.0.0.1"), host.getMessage());
        VerbsException blank = assertThrows(VerbsException.class, () -> UcxProvider.builder().cmHost(" "));
        assertTrue(blank.getMessage().contains("blank"), blank.getMessage());
        VerbsException defaults = assertThrows(VerbsException.class, () -> UcxProviderFactory.parseDefaults("invoker"));
        assertTrue(defaults.getMessage().contains(UcxProviderFactory.DEFAULTS_PROPERTY), defaults.getMessage());
        assertEquals(Map.of("tls", "sm,self", "wait", "park"), UcxProviderFactory.parseDefaults("tls=sm,self,wait=park"));
        try (RdmaProvider p = RdmaProviders.open("ucx", Map.of("tls", "sm,self", "wait", "park", "threading", "invoker"))) {
            assertEquals(UcxProvider.Wait.PARK, ((UcxProvider) p).idleWait());
        }
    }

    @Test
    void cmHostLetsCmTcpListenAtADeviceAddress() {
        try (UcxProvider p = UcxProvider.builder().tls("tcp").cm(UcxProvider.Cm.TCP).cmHost("127.0.0.1")
                .threadingMode(ThreadingMode.INVOKER).build();
             var l = p.connectionManager().listen(new io.rdmaflux.verbs.PortAddress("ucx", p.devices().get(0).name(), 0), (peer, req) -> null)) {
            assertEquals("127.0.0.1", l.address().host());
            assertEquals("ucx", l.address().fabric());
            assertTrue(l.address().port() > 0, l.address()::toString);
        }
    }
}
