package io.rdmaflux.verbs.soft.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NoLeaksExtension.class)
class NetConnectionManagerTest {
    private final NetHosts hosts = new NetHosts();

    @AfterEach
    void close() {
        hosts.close();
    }

    private static PortAddress anyPort() {
        return new PortAddress("net", "127.0.0.1", 0);
    }

    private <T> T await(CompletableFuture<T> f) {
        hosts.runUntil(f::isDone);
        return f.join();
    }

    private VerbsException awaitFailure(CompletableFuture<?> f) {
        hosts.runUntil(f::isDone);
        ExecutionException e = assertThrows(ExecutionException.class, f::get);
        return assertInstanceOf(VerbsException.class, e.getCause());
    }

    @Test
    void connectExchangesEndpointsAndPrivateDataAndTheQpsCarryAnRdmaWrite() {
        SoftProvider a = hosts.host("a");
        SoftProvider b = hosts.host("b");
        ProtectionDomain pdA = a.devices().get(0).allocateProtectionDomain();
        ProtectionDomain pdB = b.devices().get(0).allocateProtectionDomain();
        CompletionQueue cqA = a.devices().get(0).createCompletionQueue(64);
        CompletionQueue cqB = b.devices().get(0).createCompletionQueue(64);
        MemoryRegion target = pdB.allocateMemory(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        MemoryRegion source = pdA.allocateMemory(4096, Access.LOCAL_WRITE);
        List<QueuePair> serverQps = new ArrayList<>();
        ConnectionManager.Listener listener = b.connectionManager().listen(anyPort(), (from, request) -> {
            QueuePair qp = pdB.createQueuePair(QpInitAttributes.builder(QpType.RC, b.devices().get(0).port(1)).cq(cqB).build());
            qp.connect(request.endpoints().get(0));
            serverQps.add(qp);
            ByteBuffer pd = ByteBuffer.allocate(12).putLong(target.address()).putInt(target.rkey());
            return CompletableFuture.completedFuture(new CmParams(List.of(qp.localEndpoint()), pd.array()));
        });
        assertTrue(listener.address().port() > 0, "a free port was picked");
        QueuePair qa = pdA.createQueuePair(QpInitAttributes.builder(QpType.RC, a.devices().get(0).port(1)).cq(cqA).build());
        CmParams reply = await(a.connectionManager().connect(listener.address(),
            new CmParams(List.of(qa.localEndpoint()), new byte[] {1, 2, 3}), 5_000_000_000L));
        assertEquals(serverQps.get(0).qpNumber(), reply.endpoints().get(0).qpn());
        assertEquals(serverQps.get(0).localEndpoint(), reply.endpoints().get(0));
        qa.connect(reply.endpoints().get(0));
        ByteBuffer pd = ByteBuffer.wrap(reply.privateData());
        long remoteAddress = pd.getLong();
        int rkey = pd.getInt();
        byte[] data = new byte[3000];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7 + 1);
        }
        source.buffer().put(0, data);
        assertTrue(qa.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_WRITE).sge(source, 0, data.length)
            .remoteAddress(remoteAddress + 100).rkey(rkey)));
        List<WorkCompletion> wcs = new ArrayList<>();
        hosts.runUntil(() -> cqA.poll(1, wc -> wcs.add(wc.copy())) > 0 || !wcs.isEmpty());
        assertEquals(WcStatus.SUCCESS, wcs.get(0).status(), wcs.get(0)::toString);
        byte[] landed = new byte[data.length];
        target.buffer().get(100, landed);
        assertArrayEquals(data, landed, "the responder NIC placed the data in the registered region");
        listener.close();
    }

    @Test
    void listenOnAnAddressInUseThrowsNamingIt() {
        SoftProvider a = hosts.host("a");
        ConnectionManager.Listener l = a.connectionManager().listen(anyPort(), (f, r) -> new CompletableFuture<>());
        VerbsException e = assertThrows(VerbsException.class, () -> a.connectionManager().listen(l.address(), (f, r) -> new CompletableFuture<>()));
        assertTrue(e.getMessage().contains(l.address().toString()), e::getMessage);
        assertTrue(e.getMessage().contains("in use"), e::getMessage);
    }

    @Test
    void listenOnAnAddressOfAnotherHostThrowsNamingIt() {
        SoftProvider a = hosts.host("a");
        PortAddress foreign = new PortAddress("net", "192.0.2.1", 0);
        VerbsException e = assertThrows(VerbsException.class, () -> a.connectionManager().listen(foreign, (f, r) -> new CompletableFuture<>()));
        assertTrue(e.getMessage().contains("192.0.2.1"), e::getMessage);
    }

    @Test
    void connectToAnUnknownHostFailsNamingTheHost() {
        SoftProvider a = hosts.host("a");
        PortAddress nowhere = new PortAddress("net", "no-such-host.invalid", 7471);
        VerbsException e = awaitFailure(a.connectionManager().connect(nowhere, params(a), 1_000_000_000L));
        assertTrue(e.getMessage().contains("no-such-host.invalid"), e::getMessage);
        assertTrue(e.getMessage().contains("unknown host"), e::getMessage);
    }

    @Test
    void connectWhereNothingListensIsRefusedNamingTheAddress() throws IOException {
        SoftProvider a = hosts.host("a");
        int freePort;
        try (ServerSocketChannel s = ServerSocketChannel.open()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            freePort = ((InetSocketAddress) s.getLocalAddress()).getPort();
        }
        PortAddress closed = new PortAddress("net", "127.0.0.1", freePort);
        VerbsException e = awaitFailure(a.connectionManager().connect(closed, params(a), 5_000_000_000L));
        assertTrue(e.getMessage().contains("refused"), e::getMessage);
        assertTrue(e.getMessage().contains(closed.toString()), e::getMessage);
    }

    @Test
    void connectTimesOutWhenTheListenerNeverReplies() {
        SoftProvider a = hosts.host("a");
        SoftProvider b = hosts.host("b");
        ConnectionManager.Listener l = b.connectionManager().listen(anyPort(), (f, r) -> new CompletableFuture<>());
        long start = hosts.clock.nanoTime();
        VerbsException e = awaitFailure(a.connectionManager().connect(l.address(), params(a), 200_000_000L));
        long tookNs = hosts.clock.nanoTime() - start;
        assertTrue(e.getMessage().contains("timed out"), e::getMessage);
        assertTrue(e.getMessage().contains(l.address().toString()), e::getMessage);
        assertTrue(tookNs >= 200_000_000L && tookNs < 3_000_000_000L, "timed out after " + tookNs + " ns");
    }

    @Test
    void aRejectReachesTheRequesterWithItsReason() {
        SoftProvider a = hosts.host("a");
        SoftProvider b = hosts.host("b");
        ConnectionManager.Listener l = b.connectionManager().listen(anyPort(),
            (f, r) -> CompletableFuture.failedFuture(new VerbsException("no room for QP " + r.endpoints().get(0).qpn())));
        VerbsException e = awaitFailure(a.connectionManager().connect(l.address(), params(a), 5_000_000_000L));
        assertTrue(e.getMessage().contains("rejected"), e::getMessage);
        assertTrue(e.getMessage().contains("no room for QP 7"), e::getMessage);
    }

    @Test
    void aForeignClientIsRejectedAndTheListenerStaysUp() throws IOException {
        SoftProvider a = hosts.host("a");
        SoftProvider b = hosts.host("b");
        ConnectionManager.Listener l = b.connectionManager().listen(anyPort(),
            (f, r) -> CompletableFuture.completedFuture(new CmParams(r.endpoints(), new byte[0])));
        try (SocketChannel foreign = SocketChannel.open(new InetSocketAddress("127.0.0.1", l.address().port()))) {
            foreign.write(ByteBuffer.wrap("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes()));
            foreign.configureBlocking(false);
            ByteBuffer in = ByteBuffer.allocate(4096);
            hosts.runUntil(() -> {
                try {
                    return foreign.read(in) < 0;
                } catch (IOException e) {
                    return true;
                }
            });
            in.flip();
            assertTrue(in.remaining() >= CmCodec.HEADER_BYTES && CmCodec.type(in) == CmCodec.REJECT, "answered with a REJECT");
        }
        CmParams reply = await(a.connectionManager().connect(l.address(), params(a), 5_000_000_000L));
        assertEquals(7, reply.endpoints().get(0).qpn(), "the listener still serves well-formed requests");
    }

    @Test
    void theFactoryBuildsANetProviderWithOnePortPerAddress() {
        try (RdmaProvider p = RdmaProviders.open("soft", Map.of("fabric", "net", "addresses", "127.0.0.1,127.0.0.1", "threading", "invoker"))) {
            assertEquals(2, p.devices().get(0).ports().size());
            PortAddress p1 = p.devices().get(0).port(1).address();
            PortAddress p2 = p.devices().get(0).port(2).address();
            assertEquals("net", p1.fabric());
            assertEquals("127.0.0.1", p2.host());
            assertTrue(p1.port() > 0 && p2.port() > 0 && p1.port() != p2.port(), p1 + " " + p2);
            assertInstanceOf(NetConnectionManager.class, p.connectionManager());
        }
        VerbsException e = assertThrows(VerbsException.class,
            () -> RdmaProviders.open("soft", Map.of("fabric", "net", "addresses", "127.0.0.1,,10.0.0.1")));
        assertTrue(e.getMessage().contains("addresses"), e::getMessage);
        VerbsException e2 = assertThrows(VerbsException.class,
            () -> RdmaProviders.open("soft", Map.of("fabric", "mem-x", "addresses", "127.0.0.1")));
        assertTrue(e2.getMessage().contains("fabric=net"), e2::getMessage);
    }

    private static CmParams params(SoftProvider p) {
        return new CmParams(List.of(new io.rdmaflux.verbs.QpEndpoint(p.devices().get(0).port(1).address(), 7, 100, 4096)), new byte[] {9});
    }
}
