package io.rdmaflux.core;

import io.rdmaflux.verbs.CmException;
import io.rdmaflux.verbs.WcStatus;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server that restarts on the same address (mem fabric, virtual time): the client's old connection
 * errors with a cause that says what happened, a connect with {@link ConnectRetry} reaches the new
 * server, and the old connection's memory is freed and never written again.
 */
class PeerRestartTest {
    private static final ConnectRetry RETRY = ConnectRetry.backoff(20, 1_000_000).jitter(0);

    /** Receives on {@code c} into {@code into}, releasing each message after copying it. */
    private static Disposable collect(RdmaConnection c, List<String> into, AtomicReference<Throwable> error) {
        return c.receive().subscribe(m -> {
            into.add(m.asString());
            m.release();
        }, error::set);
    }

    private static Flux<RdmaMessage> messages(String prefix, int n) {
        return Flux.range(0, n).map(i -> RdmaMessage.of(prefix + i));
    }

    /** Sends on {@code c} and drives until the send completed; errors fail the test. */
    private static void send(RestartableMemPair p, RdmaConnection c, Flux<RdmaMessage> messages) {
        AtomicReference<Boolean> done = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        c.send(messages).subscribe(null, error::set, () -> done.set(true));
        p.runUntil(() -> done.get() != null || error.get() != null);
        assertNull(error.get());
    }

    private static RdmaConnection connect(RestartableMemPair p, ConnectionSpec spec, AtomicReference<RdmaConnection> accepted) {
        p.server.accept().subscribe(accepted::set);
        AtomicReference<RdmaConnection> connected = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        p.clientNode.connect(p.address, spec).subscribe(connected::set, error::set);
        p.runUntil(() -> (connected.get() != null && accepted.get() != null) || error.get() != null);
        assertNull(error.get());
        return connected.get();
    }

    @Test
    void afterACrashTheOldConnectionErrorsAndARetryingConnectReachesTheRestartedServer() {
        try (RestartableMemPair p = new RestartableMemPair()) {
            p.startServer();
            AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
            RdmaConnection old = connect(p, ConnectionSpec.defaults(), accepted);
            List<String> got = new CopyOnWriteArrayList<>();
            AtomicReference<Throwable> serverError = new AtomicReference<>();
            collect(accepted.get(), got, serverError);
            AtomicReference<Throwable> oldReceive = new AtomicReference<>();
            old.receive().subscribe(RdmaMessage::release, oldReceive::set);
            send(p, old, messages("old-", 5));
            p.drive();
            assertEquals(List.of("old-0", "old-1", "old-2", "old-3", "old-4"), got);
            int regionsWithOneConnection = p.clientProvider.liveMemoryRegions();

            p.crash();
            // the client sends into the void: the QP's retries run out
            AtomicReference<Throwable> oldSend = new AtomicReference<>();
            old.send(messages("lost-", 3)).subscribe(null, oldSend::set);
            p.runUntil(() -> oldSend.get() != null && oldReceive.get() != null);
            RdmaTransportException e = assertInstanceOf(RdmaTransportException.class, oldSend.get());
            assertEquals(WcStatus.RETRY_EXC_ERR, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("retr"), "the cause names the exhausted retries: " + e.getMessage());
            assertInstanceOf(RdmaException.class, oldReceive.get());
            p.drive();
            assertTrue(old.isDisposed());
            assertTrue(p.clientProvider.liveMemoryRegions() < regionsWithOneConnection,
                "the old connection's rail buffers are deregistered: " + p.clientProvider.liveMemoryRegions());

            // a retrying connect started while the server is down waits, then reaches it when it is back
            AtomicReference<RdmaConnection> again = new AtomicReference<>();
            AtomicReference<Throwable> againError = new AtomicReference<>();
            p.clientNode.connect(p.address, ConnectionSpec.defaults().connectRetry(RETRY)).subscribe(again::set, againError::set);
            p.runFor(10_000_000);
            assertNull(again.get());
            assertNull(againError.get(), "refusals are retried");
            p.startServer();
            AtomicReference<RdmaConnection> accepted2 = new AtomicReference<>();
            p.server.accept().subscribe(accepted2::set);
            p.runUntil(() -> again.get() != null || againError.get() != null);
            assertNull(againError.get());
            List<String> got2 = new CopyOnWriteArrayList<>();
            collect(accepted2.get(), got2, serverError);
            again.get().receive().subscribe(RdmaMessage::release);
            send(p, again.get(), messages("new-", 4));
            p.drive();
            assertEquals(List.of("new-0", "new-1", "new-2", "new-3"), got2);
            assertEquals(List.of("old-0", "old-1", "old-2", "old-3", "old-4"), got, "nothing reached the crashed server's receiver after the crash");
            assertEquals(regionsWithOneConnection, p.clientProvider.liveMemoryRegions(), "one connection's regions again, no more");
            assertNull(serverError.get());
            again.get().close();
            accepted2.get().close();
        }
    }

    @Test
    void anOrderlyShutdownTellsTheClientWhoClosedAndTheRetryReconnects() {
        try (RestartableMemPair p = new RestartableMemPair()) {
            p.startServer();
            AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
            RdmaConnection old = connect(p, ConnectionSpec.defaults(), accepted);
            accepted.get().receive().subscribe(RdmaMessage::release);
            AtomicReference<Throwable> oldReceive = new AtomicReference<>();
            old.receive().subscribe(RdmaMessage::release, oldReceive::set);
            p.drive();
            p.shutdown();
            p.runUntil(() -> oldReceive.get() != null);
            ConnectionClosedException closed = assertInstanceOf(ConnectionClosedException.class, oldReceive.get());
            assertTrue(closed.byPeer(), closed.getMessage());
            AtomicReference<Throwable> lateSend = new AtomicReference<>();
            old.send(messages("late-", 1)).subscribe(null, lateSend::set);
            p.drive();
            assertInstanceOf(ConnectionClosedException.class, lateSend.get());

            AtomicReference<RdmaConnection> again = new AtomicReference<>();
            AtomicReference<Throwable> againError = new AtomicReference<>();
            p.clientNode.connect(p.address, ConnectionSpec.defaults().connectRetry(RETRY)).subscribe(again::set, againError::set);
            p.runFor(3_000_000);
            p.startServer();
            AtomicReference<RdmaConnection> accepted2 = new AtomicReference<>();
            p.server.accept().subscribe(accepted2::set);
            p.runUntil(() -> (again.get() != null && accepted2.get() != null) || againError.get() != null);
            assertNull(againError.get());
            List<String> got = new CopyOnWriteArrayList<>();
            collect(accepted2.get(), got, new AtomicReference<>());
            again.get().receive().subscribe(RdmaMessage::release);
            send(p, again.get(), messages("m", 2));
            p.drive();
            assertEquals(List.of("m0", "m1"), got);
            again.get().close();
            accepted2.get().close();
        }
    }

    @Test
    void retriesRunOutWithTheAttemptsTheElapsedTimeAndTheLastRefusal() {
        try (RestartableMemPair p = new RestartableMemPair()) {
            AtomicReference<Throwable> error = new AtomicReference<>();
            long start = p.clock.nanoTime();
            p.clientNode.connect(p.address, ConnectionSpec.defaults().connectRetry(ConnectRetry.backoff(4, 1_000_000).jitter(0)))
                .subscribe(c -> { }, error::set);
            p.runUntil(() -> error.get() != null);
            ConnectFailedException e = assertInstanceOf(ConnectFailedException.class, error.get());
            assertEquals(4, e.attempts());
            // waits of 1, 2 and 4 ms between the four attempts
            assertTrue(e.elapsedNs() >= 7_000_000 && e.elapsedNs() < 7_100_000, "elapsed " + e.elapsedNs());
            assertTrue(p.clock.nanoTime() - start < 7_100_000);
            CmException cause = assertInstanceOf(CmException.class, e.getCause());
            assertEquals(CmException.Reason.REFUSED, cause.reason());
            assertTrue(e.getMessage().contains(p.address.toString()) && e.getMessage().contains("4 attempts"), e.getMessage());
        }
    }

    @Test
    void aRejectIsNotRetried() {
        try (RestartableMemPair p = new RestartableMemPair()) {
            p.startServer();
            AtomicReference<Throwable> error = new AtomicReference<>();
            // the server has one port: a two-rail connect is rejected, which no retry can fix
            p.server.accept().subscribe(c -> { });
            RdmaNode twoPorts = RdmaNode.builder().provider(p.clientProvider).name("two").ports(1, 1)
                .threadingMode(io.rdmaflux.verbs.ThreadingMode.INVOKER).clock(p.clock).driveProvider(false).build();
            try {
                twoPorts.connect(p.address, ConnectionSpec.rails(2).connectRetry(RETRY)).subscribe(c -> { }, error::set);
                p.runUntil(() -> {
                    twoPorts.invoke();
                    return error.get() != null;
                });
            } finally {
                twoPorts.close();
            }
            CmException e = assertInstanceOf(CmException.class, error.get());
            assertEquals(CmException.Reason.REJECTED, e.reason());
            assertTrue(e.getMessage().contains("rails"), e.getMessage());
        }
    }

    @Test
    void closingTheNodeFailsAWaitingConnectAndCancelStopsTheAttempts() {
        try (RestartableMemPair p = new RestartableMemPair()) {
            AtomicReference<Throwable> cancelledError = new AtomicReference<>();
            Disposable cancelled = p.clientNode.connect(p.address, ConnectionSpec.defaults().connectRetry(RETRY))
                .subscribe(c -> { }, cancelledError::set);
            p.runFor(2_500_000);
            cancelled.dispose();
            p.startServer();
            List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();
            p.server.accept().subscribe(accepted::add);
            p.runFor(50_000_000);
            assertEquals(List.of(), accepted, "a cancelled connect makes no further attempt");
            assertNull(cancelledError.get());
            p.shutdown();

            RdmaNode other = RdmaNode.builder().provider(p.clientProvider).name("closing")
                .threadingMode(io.rdmaflux.verbs.ThreadingMode.INVOKER).clock(p.clock).driveProvider(false).build();
            AtomicReference<Throwable> error = new AtomicReference<>();
            other.connect(p.address, ConnectionSpec.defaults().connectRetry(RETRY)).subscribe(c -> { }, error::set);
            other.invoke();
            assertNull(error.get());
            other.close();
            IllegalStateException e = assertInstanceOf(IllegalStateException.class, error.get());
            assertTrue(e.getMessage().contains("closing") && e.getMessage().contains("closed"), e.getMessage());
        }
    }

    @Test
    void theClassificationTellsRetryableFromFinalErrors() {
        assertTrue(ConnectRetry.isRetryable(new CmException(CmException.Reason.REFUSED, "x")));
        assertTrue(ConnectRetry.isRetryable(new java.util.concurrent.CompletionException(new CmException(CmException.Reason.TIMED_OUT, "x"))));
        assertTrue(!ConnectRetry.isRetryable(new CmException(CmException.Reason.REJECTED, "x")));
        assertTrue(!ConnectRetry.isRetryable(new io.rdmaflux.verbs.VerbsException("unclassified")));
        assertTrue(!ConnectRetry.isRetryable(new IllegalArgumentException("x")));
        for (CmException.Reason r : CmException.Reason.values()) {
            assertSame(r.retryable(), ConnectRetry.isRetryable(new CmException(r, "x")));
        }
    }
}
