package io.rdmaflux.core;

import io.rdmaflux.core.engine.ProgressEngine;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nodes on the one shared progress thread: closing one while another keeps the thread busy frees the
 * closed node's connections only once the thread is out of that node's duty cycle, and the other
 * node's traffic goes on intact. Real threads; every wait is bounded.
 */
class SharedNodeCloseTest {
    private static final int ROUNDS = 16;
    private static final long BOUND_NS = TimeUnit.SECONDS.toNanos(20);
    private static final int LARGE_EVERY = 32;

    /** An agent of the closing node's engine: what it saw of the close, from the shared thread. */
    private static final class Probe implements ProgressAgent {
        final RdmaNode node;
        final CountDownLatch entered = new CountDownLatch(1);
        volatile boolean holdNextCycle;
        volatile @org.jspecify.annotations.Nullable Thread closer;
        volatile boolean closeReturned;
        volatile boolean inWork;
        volatile boolean ranAfterClose;
        volatile boolean returnedWhileHeld;
        volatile int connectionsWhileHeld = -1;

        Probe(RdmaNode node) {
            this.node = node;
        }

        @Override
        public int doWork(long nowNs) {
            if (closeReturned) {
                ranAfterClose = true;
            }
            inWork = true;
            try {
                if (!holdNextCycle) {
                    return 0;
                }
                holdNextCycle = false;
                entered.countDown();
                // stay in the node's cycle until the closing thread waits in its engine's close, or is past it
                ProgressEngine engine = node.engine();
                long deadline = System.nanoTime() + BOUND_NS;
                while (!closeReturned && System.nanoTime() - deadline < 0) {
                    Thread t = closer;
                    if (t != null && LockSupport.getBlocker(t) == engine) {
                        break;
                    }
                    Thread.onSpinWait();
                }
                returnedWhileHeld = closeReturned;
                connectionsWhileHeld = node.metrics().connections();
                return 1;
            } finally {
                inWork = false;
            }
        }

        @Override
        public String roleName() {
            return "close-probe";
        }
    }

    private static RdmaMessage numbered(int i) {
        int length = i % LARGE_EVERY == 0 ? 20_000 : 16;
        return RdmaMessage.write(length, (buf, off, len) -> buf.putInt(off, i));
    }

    private static void awaitAtLeast(AtomicLong counter, long n, String what) {
        long deadline = System.nanoTime() + BOUND_NS;
        while (counter.get() < n) {
            assertTrue(System.nanoTime() - deadline < 0, what + ": " + counter.get() + " of " + n);
            Thread.onSpinWait();
        }
    }

    /** Runs a task on {@code node}'s progress thread and waits for it: the shared thread went round once more. */
    private static void passOfTheSharedThread(RdmaNode node) throws Exception {
        CompletableFuture<Thread> ran = new CompletableFuture<>();
        node.engine().execute(() -> ran.complete(Thread.currentThread()));
        node.engine().wake();
        assertEquals("rdmaflux-progress-shared", ran.get(20, TimeUnit.SECONDS).getName());
    }

    @Test
    void closingASharedNodeWhileAnotherRunsFreesItsConnectionsOnlyOnceTheThreadLeftItsCycle() throws Exception {
        SoftFabric fabric = SoftFabric.mem("shared-close");
        try (SoftProvider pa = SoftProvider.builder().name("shared-close-a").fabric(fabric).build();
             SoftProvider pb = SoftProvider.builder().name("shared-close-b").fabric(fabric).build()) {
            PortAddress anyB = new PortAddress("mem", pb.devices().get(0).name(), 0);
            try (RdmaNode keepA = RdmaNode.builder().provider(pa).name("keep-a").threadingMode(ThreadingMode.SHARED).build();
                 RdmaNode keepB = RdmaNode.builder().provider(pb).name("keep-b").threadingMode(ThreadingMode.SHARED).build()) {
                RdmaServer keepServer = keepB.bind(anyB);
                RdmaConnection kc = keepA.connect(keepServer.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
                RdmaConnection ks = keepServer.accept().blockFirst(Duration.ofSeconds(10));
                AtomicLong keepReceived = new AtomicLong();
                AtomicReference<String> keepWrong = new AtomicReference<>();
                AtomicReference<Throwable> keepError = new AtomicReference<>();
                ks.receive().subscribe(m -> {
                    long expected = keepReceived.get();
                    int got = m.content().getInt(0);
                    int length = m.lengthBytes();
                    m.release();
                    if (got != expected || length != numbered(got).lengthBytes()) {
                        keepWrong.compareAndSet(null, "expected message " + expected + " but got " + got + " of " + length + " bytes");
                    }
                    keepReceived.incrementAndGet();
                }, keepError::set);
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong keepSent = new AtomicLong();
                Flux<RdmaMessage> endless = Flux.generate(() -> 0, (i, sink) -> {
                    if (stop.get()) {
                        sink.complete();
                    } else {
                        sink.next(numbered(i));
                        keepSent.incrementAndGet();
                    }
                    return i + 1;
                });
                CompletableFuture<Void> keepDone = kc.send(endless).toFuture();

                for (int round = 0; round < ROUNDS; round++) {
                    RdmaNode x = RdmaNode.builder().provider(pa).name("x" + round).threadingMode(ThreadingMode.SHARED).build();
                    RdmaNode y = RdmaNode.builder().provider(pb).name("y" + round).threadingMode(ThreadingMode.SHARED).build();
                    try {
                        RdmaServer ys = y.bind(anyB);
                        RdmaConnection xc = x.connect(ys.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
                        RdmaConnection yc = ys.accept().blockFirst(Duration.ofSeconds(10));
                        AtomicLong yReceived = new AtomicLong();
                        yc.receive().subscribe(m -> {
                            m.release();
                            yReceived.incrementAndGet();
                        }, e -> { });
                        // closed mid-stream: the send ends with the close's error
                        xc.send(Flux.range(0, Integer.MAX_VALUE).map(SharedNodeCloseTest::numbered)).subscribe(null, e -> { });
                        awaitAtLeast(yReceived, 100, "round " + round + " x -> y");
                        Probe probe = new Probe(x);
                        probe.closer = Thread.currentThread();
                        x.engine().add(probe);
                        boolean held = round % 2 == 0;
                        if (held) {
                            // odd rounds close at whatever point the thread is; even ones while it is in x's cycle
                            probe.holdNextCycle = true;
                            x.engine().wake();
                            assertTrue(probe.entered.await(20, TimeUnit.SECONDS), "round " + round + ": the probe never ran");
                        }
                        x.close();
                        probe.closeReturned = true;
                        assertFalse(probe.inWork, "round " + round + ": x's close returned while its duty cycle ran");
                        if (held) {
                            assertFalse(probe.returnedWhileHeld, "round " + round + ": x's close returned while the shared thread was in x's cycle");
                            assertEquals(1, probe.connectionsWhileHeld,
                                "round " + round + ": x's connection was freed while the shared thread was in x's cycle");
                        }
                        assertEquals(new RdmaNode.NodeMetrics(0, 0), x.metrics(), "round " + round);
                        passOfTheSharedThread(keepA);
                        assertFalse(probe.ranAfterClose, "round " + round + ": x's agents ran after its close returned");
                    } finally {
                        x.close();
                        y.close();
                    }
                    long before = keepReceived.get();
                    awaitAtLeast(keepReceived, before + 1, "round " + round + ": the other node's traffic after the close");
                }
                stop.set(true);
                keepDone.get(30, TimeUnit.SECONDS);
                awaitAtLeast(keepReceived, keepSent.get(), "the other node's messages");
                assertNull(keepWrong.get());
                assertNull(keepError.get());
                assertEquals(keepSent.get(), keepReceived.get());
                kc.close();
                Mono.when(kc.onClose(), ks.onClose()).block(Duration.ofSeconds(10));
            }
        }
    }
}
