package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.VerbsException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The disni connection manager's TCP exchange, on the loopback address only (127.0.0.1), driven by
 * {@code doWork} from the test thread; every loop is bounded.
 */
class DisniConnectionManagerTest {
    private final DisniConnectionManager server = new DisniConnectionManager();
    private final DisniConnectionManager client = new DisniConnectionManager();
    private long now;

    @AfterEach
    void close() {
        client.close();
        server.close();
    }

    private static CmParams params(int qpn, byte[] data) {
        return new CmParams(List.of(new QpEndpoint(new PortAddress("disni", "127.0.0.1", 20_000 + qpn), qpn, 0, 4096)), data);
    }

    private <T> T await(CompletableFuture<T> f) throws Exception {
        long until = System.nanoTime() + 10_000_000_000L;
        while (!f.isDone() && System.nanoTime() < until) {
            server.doWork(now);
            client.doWork(now);
            now += 1_000;
            Thread.onSpinWait();
        }
        assertTrue(f.isDone(), "exchange did not finish in 10 s");
        return f.get();
    }

    private static VerbsException failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, f::get);
        assertTrue(e.getCause() instanceof VerbsException, e.getCause().toString());
        return (VerbsException) e.getCause();
    }

    @Test
    void aRequestIsAnsweredWithTheListenersParamsAndPrivateData() throws Exception {
        AtomicReference<PortAddress> from = new AtomicReference<>();
        byte[] big = new byte[ConnectionManager.MAX_PRIVATE_DATA_BYTES];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 7);
        }
        ConnectionManager.Listener l = server.listen(new PortAddress("disni", "127.0.0.1", 0), (peer, request) -> {
            from.set(peer);
            assertEquals(7, request.endpoints().get(0).qpn());
            assertArrayEquals(big, request.privateData());
            return CompletableFuture.completedFuture(params(9, new byte[] {1, 2}));
        });
        assertTrue(l.address().port() > 0, "the real port is reported");
        CmParams reply = await(client.connect(l.address(), params(7, big), 5_000_000_000L));
        assertEquals(9, reply.endpoints().get(0).qpn());
        assertEquals(new PortAddress("disni", "127.0.0.1", 20_009), reply.endpoints().get(0).address());
        assertArrayEquals(new byte[] {1, 2}, reply.privateData());
        assertEquals("127.0.0.1", from.get().host());
    }

    @Test
    void aHandlerThatRejectsFailsTheRequestWithItsReason() throws Exception {
        CompletableFuture<CmParams> later = new CompletableFuture<>();
        ConnectionManager.Listener l = server.listen(new PortAddress("disni", "127.0.0.1", 0), (peer, request) -> later);
        CompletableFuture<CmParams> f = client.connect(l.address(), params(1, new byte[0]), 5_000_000_000L);
        for (int i = 0; i < 1000 && !f.isDone(); i++) {
            server.doWork(now);
            client.doWork(now);
        }
        later.completeExceptionally(new IllegalStateException("no credits for you"));
        try {
            await(f);
        } catch (ExecutionException expected) {
            // checked below
        }
        VerbsException e = failure(f);
        assertTrue(e.getMessage().contains("rejected") && e.getMessage().contains("no credits for you"), e.getMessage());
    }

    @Test
    void nothingListeningIsRefusedNamingTheAddress() throws Exception {
        int port;
        try (ServerSocketChannel probe = ServerSocketChannel.open()) {
            probe.bind(new InetSocketAddress("127.0.0.1", 0));
            port = ((InetSocketAddress) probe.getLocalAddress()).getPort();
        }
        PortAddress nobody = new PortAddress("disni", "127.0.0.1", port);
        CompletableFuture<CmParams> f = client.connect(nobody, params(1, new byte[0]), 5_000_000_000L);
        try {
            await(f);
        } catch (ExecutionException expected) {
            // checked below
        }
        VerbsException e = failure(f);
        assertTrue(e.getMessage().contains("refused") && e.getMessage().contains(nobody.toString()), e.getMessage());
    }

    @Test
    void aListenerThatNeverAnswersTimesOutOnTheProvidersClock() throws Exception {
        try (ServerSocketChannel silent = ServerSocketChannel.open()) {
            silent.bind(new InetSocketAddress("127.0.0.1", 0));
            PortAddress at = new PortAddress("disni", "127.0.0.1", ((InetSocketAddress) silent.getLocalAddress()).getPort());
            CompletableFuture<CmParams> f = client.connect(at, params(1, new byte[0]), 50_000);
            try {
                await(f);
            } catch (ExecutionException expected) {
                // checked below
            }
            VerbsException e = failure(f);
            assertTrue(e.getMessage().contains("no reply from " + at), e.getMessage());
        }
    }

    @Test
    void badAddressesAreRejectedNamingThem() {
        VerbsException e = assertThrows(VerbsException.class,
            () -> server.listen(new PortAddress("net", "127.0.0.1", 0), (p, r) -> CompletableFuture.completedFuture(r)));
        assertTrue(e.getMessage().contains("net://127.0.0.1:0") && e.getMessage().contains("disni://"), e.getMessage());
        ConnectionManager.Listener l = server.listen(new PortAddress("disni", "127.0.0.1", 0), (p, r) -> CompletableFuture.completedFuture(r));
        e = assertThrows(VerbsException.class, () -> client.listen(l.address(), (p, r) -> CompletableFuture.completedFuture(r)));
        assertTrue(e.getMessage().contains(l.address().toString()), e.getMessage());
        assertTrue(failure(client.connect(new PortAddress("disni", "rdma-host", 1), params(1, new byte[0]), 1))
            .getMessage().contains("IP address literal"));
        client.close();
        assertTrue(failure(client.connect(l.address(), params(1, new byte[0]), 1)).getMessage().contains("closed"));
    }
}
