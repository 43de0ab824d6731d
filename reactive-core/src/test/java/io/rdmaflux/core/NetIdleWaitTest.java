package io.rdmaflux.core;

import io.rdmaflux.core.engine.IdleWait;
import io.rdmaflux.core.engine.ProgressIdleStrategy;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nodes that drive an INVOKER soft provider on the IP fabric idle in the provider's socket selector:
 * the wiring, and a ping-pong whose every hop needs a socket wake-up (each node blocks whenever it
 * has nothing to do; its only other way out is a 1 ms timeout, which the test does not measure).
 */
class NetIdleWaitTest {
    private static RdmaProvider netProvider(String name) {
        return NetProviders.builder(NetTransportConfig.loopback()).name(name).threadingMode(ThreadingMode.INVOKER).build();
    }

    /** Subscribes to {@code send} now; its error also fails {@code wait}, so a wait on that ends at once with the send's error as cause. */
    private static CompletableFuture<Void> sendFailing(Mono<Void> send, CompletableFuture<?> wait) {
        CompletableFuture<Void> sent = send.toFuture();
        sent.whenComplete((ignored, e) -> {
            if (e != null) {
                wait.completeExceptionally(e);
            }
        });
        return sent;
    }

    @Test
    void aNodeDrivingAnInvokerProviderWaitsInItAndOthersPark() {
        try (RdmaProvider invoker = netProvider("wait-invoker");
             RdmaProvider dedicated = NetProviders.builder(NetTransportConfig.loopback()).name("wait-dedicated").build();
             RdmaNode driving = RdmaNode.builder().provider(invoker).name("driving").build();
             RdmaNode onDedicated = RdmaNode.builder().provider(dedicated).name("on-dedicated").build()) {
            ProgressIdleStrategy waits = assertInstanceOf(ProgressIdleStrategy.class, driving.engine().idleStrategy());
            assertNotNull(waits.idleWait(), "the node drives the provider, so it may block in its selector");
            ProgressIdleStrategy parks = assertInstanceOf(ProgressIdleStrategy.class, onDedicated.engine().idleStrategy());
            assertNull(parks.idleWait(), "the provider's own thread drives it; the node parks");
        }
    }

    @Test
    void aConfiguredProgressStrategyIsATemplateAndOtherStrategiesAreKept() {
        ProgressIdleStrategy template = ProgressIdleStrategy.lowLatency();
        IdleStrategy busy = new BusySpinIdleStrategy();
        try (RdmaProvider p = netProvider("wait-template");
             RdmaNode first = RdmaNode.builder().provider(p).name("first").idleStrategy(template).build();
             RdmaNode second = RdmaNode.builder().provider(p).name("second").idleStrategy(template).driveProvider(false).build();
             SoftProvider mem = SoftProvider.builder().name("wait-busy").fabric(SoftFabric.mem("wait-busy")).build();
             RdmaNode spinning = RdmaNode.builder().provider(mem).name("spinning").idleStrategy(busy).build()) {
            ProgressIdleStrategy a = assertInstanceOf(ProgressIdleStrategy.class, first.engine().idleStrategy());
            ProgressIdleStrategy b = assertInstanceOf(ProgressIdleStrategy.class, second.engine().idleStrategy());
            assertTrue(a != template && b != template && a != b, "each node idles with its own copy of the template");
            assertNotNull(a.idleWait());
            assertNull(b.idleWait(), "a node that does not drive the provider must not block in it");
            assertSame(busy, spinning.engine().idleStrategy());
        }
    }

    @Test
    void theIdleWaitOfAProviderWithItsOwnThreadIsRefused() {
        try (RdmaProvider dedicated = NetProviders.builder(NetTransportConfig.loopback()).name("wait-refused").build()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IdleWait.of(dedicated));
            assertTrue(e.getMessage().contains("DEDICATED") && e.getMessage().contains("INVOKER"), e.getMessage());
        }
    }

    /**
     * Emits {@code m} into {@code sink}, retrying while another thread is inside an emit of its own: the
     * first ping comes from the test thread, which may still be in the sink's drain (handing the ping to
     * the send) when the echo has come back and the progress thread emits the next one, and a unicast
     * sink refuses such an overlapping emit (FAIL_NON_SERIALIZED) instead of queueing it.
     */
    private static void emitSerialized(Sinks.Many<RdmaMessage> sink, RdmaMessage m) {
        sink.emitNext(m, Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(30)));
    }

    @Test
    void aPingPongBetweenTwoBlockingNodesCompletesEveryRoundTrip() throws Exception {
        int rounds = 300;
        try (RdmaProvider pa = netProvider("pp-a");
             RdmaProvider pb = netProvider("pp-b");
             RdmaNode a = RdmaNode.builder().provider(pa).name("pp-a").build();
             RdmaNode b = RdmaNode.builder().provider(pb).name("pp-b").build()) {
            RdmaServer server = b.bind(new PortAddress("net", "127.0.0.1", 0));
            RdmaConnection client = a.connect(server.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(30));
            RdmaConnection echo = server.accept().blockFirst(Duration.ofSeconds(30));
            assertNotNull(client);
            assertNotNull(echo);
            CompletableFuture<Void> done = new CompletableFuture<>();
            Sinks.Many<RdmaMessage> back = Sinks.many().unicast().onBackpressureBuffer();
            CompletableFuture<Void> echoSent = sendFailing(echo.send(back.asFlux()), done);
            echo.receive().subscribe(back::tryEmitNext);

            Sinks.Many<RdmaMessage> out = Sinks.many().unicast().onBackpressureBuffer();
            AtomicInteger returned = new AtomicInteger();
            client.receive().subscribe(m -> {
                int v = m.content().getInt(0);
                m.release();
                if (v != returned.get()) {
                    done.completeExceptionally(new AssertionError("echo " + v + " out of order, expected " + returned.get()));
                    return;
                }
                if (returned.incrementAndGet() == rounds) {
                    done.complete(null);
                } else {
                    int next = returned.get();
                    try {
                        emitSerialized(out, RdmaMessage.write(4, (buf, off, len) -> buf.putInt(off, next)));
                    } catch (RuntimeException e) {
                        done.completeExceptionally(e);
                    }
                }
            });
            CompletableFuture<Void> clientSent = sendFailing(client.send(out.asFlux()), done);
            // handed in from this (non-progress) thread: the wake must reach a node blocked in its selector
            emitSerialized(out, RdmaMessage.write(4, (buf, off, len) -> buf.putInt(off, 0)));
            done.orTimeout(60, TimeUnit.SECONDS).join();
            assertEquals(rounds, returned.get());
            out.tryEmitComplete();
            back.tryEmitComplete();
            clientSent.get(30, TimeUnit.SECONDS);
            echoSent.get(30, TimeUnit.SECONDS);
            client.close();
            client.onClose().block(Duration.ofSeconds(30));
            echo.onClose().block(Duration.ofSeconds(30));
        }
    }
}
