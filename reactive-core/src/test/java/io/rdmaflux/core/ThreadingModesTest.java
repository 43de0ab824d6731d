package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** DEDICATED and SHARED run on named threads that stop on close; signals come from them. */
class ThreadingModesTest {
    @ParameterizedTest
    @EnumSource(value = ThreadingMode.class, names = {"DEDICATED", "SHARED"})
    void signalsComeFromTheNamedProgressThreadWhichStopsOnClose(ThreadingMode mode) {
        SoftFabric fabric = SoftFabric.mem("threads-" + mode);
        try (SoftProvider pa = SoftProvider.builder().name("ta-" + mode).fabric(fabric).build();
             SoftProvider pb = SoftProvider.builder().name("tb-" + mode).fabric(fabric).build();
             RdmaNode a = RdmaNode.builder().provider(pa).name("a").threadingMode(mode).build();
             RdmaNode b = RdmaNode.builder().provider(pb).name("b").threadingMode(mode).build()) {
            RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
            Set<String> threads = ConcurrentHashMap.newKeySet();
            RdmaConnection c = a.connect(server.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
            RdmaConnection s = server.accept().blockFirst(Duration.ofSeconds(10));
            Flux<Integer> received = s.receive().map(m -> {
                threads.add(Thread.currentThread().getName());
                int v = m.content().getInt(0);
                m.release();
                return v;
            }).take(1000);
            Mono<Boolean> sent = c.send(Flux.range(0, 1000).map(i -> RdmaMessage.write(4, (buf, off, len) -> buf.putInt(off, i))))
                .thenReturn(true);
            // zipped with the send: a send error ends the wait at once, with its cause
            assertEquals(1000, Mono.zip(received.count(), sent, (count, done) -> count).block(Duration.ofSeconds(30)));
            String expected = mode == ThreadingMode.SHARED ? "rdmaflux-progress-shared" : "rdmaflux-progress-b";
            assertEquals(Set.of(expected), threads);
            c.close();
            c.onClose().block(Duration.ofSeconds(10));
        }
        // checked at once, no grace: the last close on a thread returns only once the thread has ended
        // (closeOfTheLastNodeOnAThreadReturnsOnlyOnceTheThreadHasTerminated)
        assertEquals(List.of(), progressThreadsAlive(), "the progress threads stopped on close");
    }

    /** The thread running {@code node}'s duty cycles, asked of the engine itself. */
    private static Thread progressThreadOf(RdmaNode node) throws Exception {
        CompletableFuture<Thread> thread = new CompletableFuture<>();
        node.engine().execute(() -> thread.complete(Thread.currentThread()));
        node.engine().wake();
        return thread.get(10, TimeUnit.SECONDS);
    }

    private static List<String> progressThreadsAlive() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
            .filter(n -> n.startsWith("rdmaflux-progress")).sorted().toList();
    }

    @ParameterizedTest
    @EnumSource(value = ThreadingMode.class, names = {"DEDICATED", "SHARED"})
    void closeOfTheLastNodeOnAThreadReturnsOnlyOnceTheThreadHasTerminated(ThreadingMode mode) throws Exception {
        SoftFabric fabric = SoftFabric.mem("join-" + mode);
        try (SoftProvider p = SoftProvider.builder().name("join-" + mode).fabric(fabric).build()) {
            // the window between the runner saying it stopped and the thread ending is short: look many times
            for (int round = 0; round < 50; round++) {
                RdmaNode a = RdmaNode.builder().provider(p).name("ja" + round).threadingMode(mode).build();
                RdmaNode b = RdmaNode.builder().provider(p).name("jb" + round).threadingMode(mode).build();
                Thread ta = progressThreadOf(a);
                Thread tb = progressThreadOf(b);
                a.close();
                if (mode == ThreadingMode.SHARED) {
                    assertSame(ta, tb, "one shared thread");
                    assertTrue(tb.isAlive(), "b still runs on the shared thread after a closed");
                } else {
                    assertFalse(ta.isAlive(), "round " + round + ": a's close returned while " + ta.getName() + " still ran");
                }
                b.close();
                assertFalse(tb.isAlive(), "round " + round + ": the last close returned while " + tb.getName() + " still ran");
                assertEquals(List.of(), progressThreadsAlive(), "round " + round);
            }
        }
    }

    @Test
    void nodesBuiltFromOneBuilderEachIdleWithTheirOwnStrategy() {
        SoftFabric fabric = SoftFabric.mem("idle-own");
        try (SoftProvider p = SoftProvider.builder().name("idle-own").fabric(fabric).build()) {
            RdmaNode.Builder builder = RdmaNode.builder().provider(p).threadingMode(ThreadingMode.DEDICATED);
            try (RdmaNode first = builder.name("first").build(); RdmaNode second = builder.name("second").build()) {
                assertTrue(first.engine().idleStrategy() != null && second.engine().idleStrategy() != null);
                assertTrue(first.engine().idleStrategy() != second.engine().idleStrategy(),
                    "a BackoffIdleStrategy keeps one thread's back-off state; two progress threads must not share one");
            }
        }
    }

    @Test
    void invokeOutsideInvokerModeNamesTheMode() {
        try (SoftProvider p = SoftProvider.builder().name("inv").fabric(SoftFabric.mem("inv")).build();
             RdmaNode n = RdmaNode.builder().provider(p).threadingMode(ThreadingMode.DEDICATED).build()) {
            IllegalStateException e = assertThrows(IllegalStateException.class, n::invoke);
            assertTrue(e.getMessage().contains("DEDICATED"), e.getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(value = ThreadingMode.class, names = {"DEDICATED", "SHARED"})
    void largeMessagesReleasedOnAnotherThreadReturnTheirBuffersToThePool(ThreadingMode mode) {
        SoftFabric fabric = SoftFabric.mem("rv-threads-" + mode);
        try (SoftProvider pa = SoftProvider.builder().name("rva-" + mode).fabric(fabric).build();
             SoftProvider pb = SoftProvider.builder().name("rvb-" + mode).fabric(fabric).build();
             RdmaNode a = RdmaNode.builder().provider(pa).name("a").threadingMode(mode).maxMessageBytes(256 * 1024).build();
             RdmaNode b = RdmaNode.builder().provider(pb).name("b").threadingMode(mode).maxMessageBytes(256 * 1024).build()) {
            RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
            RdmaConnection c = a.connect(server.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
            RdmaConnection s = server.accept().blockFirst(Duration.ofSeconds(10));
            byte[] big = RendezvousTest.pattern(200_000, 9);
            // released on a Reactor worker thread, not the progress thread
            Flux<Boolean> received = s.receive()
                .publishOn(reactor.core.scheduler.Schedulers.single())
                .map(m -> {
                    boolean same = java.util.Arrays.equals(big, m.toByteArray());
                    m.release();
                    return same;
                }).take(200);
            Mono<Boolean> sent = c.send(Flux.range(0, 200).map(i -> RdmaMessage.of(big))).thenReturn(true);
            // zipped with the send: a send error ends the wait at once, with its cause
            assertEquals(java.util.List.of(true),
                Mono.zip(received.distinct().collectList(), sent, (same, done) -> same).block(Duration.ofSeconds(60)));
            assertEquals(0, b.rendezvousPool(true).inUse());
            c.close();
            c.onClose().block(Duration.ofSeconds(10));
        }
    }
}
