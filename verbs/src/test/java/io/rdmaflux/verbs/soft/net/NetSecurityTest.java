package io.rdmaflux.verbs.soft.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CmException;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFrame;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The net fabric keeps strangers out: an RC frame forged by another host (its own TCP stream, a real
 * QPN pair, the right PSN and rkey) is dropped and counted, and a node with a peer filter refuses the
 * streams, datagrams and connect requests of hosts outside it. Over loopback: 127.0.0.2 is "another
 * host" (Linux routes all of 127/8 to lo).
 */
@ExtendWith(NoLeaksExtension.class)
class NetSecurityTest {
    private static final String STRANGER = "127.0.0.2";

    private final NetHosts hosts = new NetHosts();

    @AfterEach
    void close() {
        hosts.close();
    }

    private record Side(SoftProvider provider, SoftDevice device, ProtectionDomain pd, CompletionQueue cq) {
        static Side of(SoftProvider p) {
            SoftDevice d = p.softDevice(0);
            return new Side(p, d, d.allocateProtectionDomain(), d.createCompletionQueue(256));
        }

        QueuePair rc() {
            return pd.createQueuePair(QpInitAttributes.builder(QpType.RC, device.port(1)).cq(cq).build());
        }
    }

    private List<WorkCompletion> await(CompletionQueue cq, int n) {
        List<WorkCompletion> out = new ArrayList<>();
        hosts.runUntil(() -> {
            cq.poll(n - out.size(), wc -> out.add(wc.copy()));
            return out.size() >= n;
        });
        return out;
    }

    /** An RDMA WRITE frame as {@code qa} would send it to {@code qb}, with {@code payload}. */
    private static ByteBuffer forgedWrite(SoftDevice any, QueuePair qa, QueuePair qb, MemoryRegion target, byte[] payload) {
        SoftFrame f = any.claimFrame();
        try {
            f.type = FrameType.RDMA_WRITE;
            f.sourceQpn = qa.qpNumber();
            f.destinationQpn = qb.qpNumber();
            f.psn = qa.localEndpoint().startPsn();
            f.rkey = target.rkey();
            f.remoteAddress = target.address();
            f.length = payload.length;
            ByteBuffer b = ByteBuffer.allocate(NetFrameCodec.HEADER_BYTES + payload.length).order(ByteOrder.LITTLE_ENDIAN);
            NetFrameCodec.encodeHeader(f, b, 0);
            b.put(NetFrameCodec.HEADER_BYTES, payload);
            return b;
        } finally {
            f.release();
        }
    }

    @Test
    void anRcFrameForgedByAnotherHostIsDroppedAndCountedAndTheRealPeerGoesOn() throws IOException {
        Side a = Side.of(hosts.host("sec-a"));
        Side b = Side.of(hosts.host("sec-b"));
        QueuePair qa = a.rc();
        QueuePair qb = b.rc();
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        MemoryRegion target = b.pd.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        byte[] evil = new byte[64];
        java.util.Arrays.fill(evil, (byte) 0x66);
        PortAddress pb = b.device.port(1).address();
        try (SocketChannel stranger = SocketChannel.open()) {
            stranger.bind(new InetSocketAddress(STRANGER, 0));
            stranger.connect(new InetSocketAddress(pb.host(), pb.port()));
            ByteBuffer frame = forgedWrite(a.device, qa, qb, target, evil);
            while (frame.hasRemaining()) {
                stranger.write(frame);
            }
            hosts.runUntil(() -> b.device.rcForeignFramesDropped() >= 1);
        }
        assertArrayEquals(new byte[64], bytes(target, 64), "the forged WRITE placed nothing");

        // the real peer's WRITE with the same PSN is the one executed
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        byte[] good = new byte[64];
        java.util.Arrays.fill(good, (byte) 0x11);
        src.buffer().put(0, good);
        assertTrue(qa.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, 64)
            .remoteAddress(target.address()).rkey(target.rkey())));
        WorkCompletion wc = await(a.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertArrayEquals(good, bytes(target, 64));
        assertEquals(1, b.device.rcForeignFramesDropped());
    }

    @Test
    void aPeerFilterRefusesAndCountsTheStreamsDatagramsAndConnectRequestsOfOtherHosts() throws Exception {
        NetTransportConfig guarded = NetTransportConfig.builder().address("127.0.0.1").allowPeers(List.of("127.0.0.1/32")).build();
        SoftProvider server = hosts.host("filter-b", guarded);
        NetTransport tb = hosts.transportOf(server);
        NetConnectionManager cm = (NetConnectionManager) server.connectionManager();
        PortAddress port = server.devices().get(0).port(1).address();
        ConnectionAttempts listener = new ConnectionAttempts();
        PortAddress listening = cm.listen(new PortAddress("net", "127.0.0.1", 0), listener::onRequest).address();

        try (SocketChannel tcp = SocketChannel.open(); DatagramChannel udp = DatagramChannel.open()) {
            tcp.bind(new InetSocketAddress(STRANGER, 0));
            tcp.connect(new InetSocketAddress(port.host(), port.port()));
            udp.bind(new InetSocketAddress(STRANGER, 0));
            udp.send(ByteBuffer.allocate(NetFrameCodec.HEADER_BYTES), new InetSocketAddress(port.host(), port.port()));
            hosts.runUntil(() -> tb.peersRefused() >= 2);
        }
        assertEquals(0, tb.framesRejected(), "refused before their bytes are parsed");

        // a connect request from a host outside the filter: closed unread, the requester sees a broken exchange
        SoftProvider stranger = hosts.host("filter-stranger", NetTransportConfig.builder().address(STRANGER).build());
        CompletableFuture<CmParams> refused = stranger.connectionManager().connect(listening,
            new CmParams(List.of(new io.rdmaflux.verbs.QpEndpoint(stranger.devices().get(0).port(1).address(), 1, 0, 4096)), new byte[0]),
            5_000_000_000L);
        hosts.runUntil(refused::isDone);
        ExecutionException e = assertThrows(ExecutionException.class, refused::get);
        assertEquals(CmException.Reason.RESET, assertInstanceOf(CmException.class, e.getCause()).reason(), e.getCause().getMessage());
        assertEquals(1, cm.requestsRefused());
        assertEquals(0, listener.requests, "the handler never ran");

        // an admitted host is heard
        SoftProvider friend = hosts.host("filter-friend");
        CompletableFuture<CmParams> ok = friend.connectionManager().connect(listening,
            new CmParams(List.of(new io.rdmaflux.verbs.QpEndpoint(friend.devices().get(0).port(1).address(), 1, 0, 4096)), new byte[0]),
            5_000_000_000L);
        hosts.runUntil(ok::isDone);
        assertEquals(1, listener.requests);
        assertEquals(1, cm.requestsRefused());
    }

    @Test
    void aPeerFilterEntryThatIsNotAnIpLiteralIsRejectedNamingIt() {
        VerbsException name = assertThrows(VerbsException.class,
            () -> NetTransportConfig.builder().allowPeers(List.of("localhost")));
        assertTrue(name.getMessage().contains("'localhost'"), name.getMessage());
        VerbsException prefix = assertThrows(VerbsException.class,
            () -> NetTransportConfig.builder().allowPeers(List.of("10.0.0.0/33")));
        assertTrue(prefix.getMessage().contains("'33'") && prefix.getMessage().contains("32"), prefix.getMessage());
        VerbsException empty = assertThrows(VerbsException.class, () -> NetTransportConfig.builder().allowPeers(List.of()));
        assertTrue(empty.getMessage().contains("at least one"), empty.getMessage());
        NetPeerFilter f = NetPeerFilter.of(List.of("10.77.0.0/16", "::1"));
        assertTrue(f.admits(addr("10.77.200.3")));
        assertTrue(!f.admits(addr("10.78.0.1")));
        assertTrue(f.admits(addr("::1")));
        assertTrue(!f.admits(addr("127.0.0.1")));
        assertTrue(NetPeerFilter.of(List.of("0.0.0.0/0")).admits(addr("8.8.8.8")));
    }

    private static InetAddress addr(String ip) {
        try {
            return InetAddress.getByName(ip);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] bytes(MemoryRegion mr, int n) {
        byte[] out = new byte[n];
        mr.buffer().get(0, out);
        return out;
    }

    /** A listener's handler that counts requests and accepts with no endpoints. */
    private static final class ConnectionAttempts {
        int requests;

        CompletableFuture<CmParams> onRequest(PortAddress from, CmParams request) {
            requests++;
            return CompletableFuture.completedFuture(new CmParams(request.endpoints(), new byte[0]));
        }
    }
}
