package io.rdmaflux.verbs.soft.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.AwaitWorkChecks;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Bad input on the IP fabric: foreign senders, dead peers, bad keys, oversized messages, bad addresses. */
@ExtendWith(NoLeaksExtension.class)
class NetBadInputTest {
    private static final long HOUR_NS = AwaitWorkChecks.HOUR_NS;

    private final NetHosts hosts = new NetHosts();

    @AfterEach
    void close() {
        hosts.close();
    }

    /** One host's verbs objects. */
    private static final class Side {
        final SoftProvider provider;
        final Device device;
        final ProtectionDomain pd;
        final CompletionQueue cq;

        Side(SoftProvider p) {
            provider = p;
            device = p.devices().get(0);
            pd = device.allocateProtectionDomain();
            cq = device.createCompletionQueue(4096);
        }

        QueuePair qp(QpType type, UnaryOperator<QpInitAttributes.Builder> tweak) {
            QueuePair qp = pd.createQueuePair(tweak.apply(QpInitAttributes.builder(type, device.port(1)).cq(cq)).build());
            if (type == QpType.UD) {
                qp.init();
                qp.readyToReceive();
                qp.readyToSend();
            }
            return qp;
        }
    }

    private static QueuePair[] rc(Side x, Side y, UnaryOperator<QpInitAttributes.Builder> tweak) {
        QueuePair qx = x.qp(QpType.RC, tweak);
        QueuePair qy = y.qp(QpType.RC, tweak);
        qx.connect(qy.localEndpoint());
        qy.connect(qx.localEndpoint());
        return new QueuePair[] {qx, qy};
    }

    private List<WorkCompletion> await(CompletionQueue cq, int n) {
        List<WorkCompletion> out = new ArrayList<>();
        hosts.runUntil(() -> {
            cq.poll(n - out.size(), wc -> out.add(wc.copy()));
            return out.size() >= n;
        });
        return out;
    }

    private static byte[] pattern(int n, int seed) {
        byte[] p = new byte[n];
        for (int i = 0; i < n; i++) {
            p[i] = (byte) (i * 31 + seed);
        }
        return p;
    }

    private static SendWorkRequest write(MemoryRegion src, int length, MemoryRegion dst, long wrId) {
        return new SendWorkRequest().wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, length).remoteAddress(dst.address()).rkey(dst.rkey());
    }

    @Test
    void foreignDatagramsAndStreamsAreDroppedAndCountedAndTrafficGoesOn() throws IOException {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        NetTransport tb = hosts.transportOf(b.provider);
        PortAddress pb = b.device.port(1).address();
        InetSocketAddress target = new InetSocketAddress("127.0.0.1", pb.port());
        try (DatagramChannel udp = DatagramChannel.open(); SocketChannel tcp = SocketChannel.open(target)) {
            udp.send(ByteBuffer.wrap(new byte[] {'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), target);
            ByteBuffer lying = ByteBuffer.allocate(NetFrameCodec.HEADER_BYTES + 10).order(ByteOrder.LITTLE_ENDIAN);
            lying.putInt(0, NetFrameCodec.MAGIC).put(4, (byte) NetFrameCodec.VERSION).put(5, (byte) 6);
            lying.putInt(NetFrameCodec.FRAME_LENGTH_OFFSET, 1 << 20).putInt(NetFrameCodec.LENGTH_OFFSET, 10);
            udp.send(lying.duplicate(), target);
            udp.send(ByteBuffer.wrap(new byte[3]), target);
            tcp.write(lying.duplicate());
            hosts.runUntil(() -> tb.framesRejected() >= 4);
        }
        QueuePair ua = a.qp(QpType.UD, UnaryOperator.identity());
        QueuePair ub = b.qp(QpType.UD, UnaryOperator.identity());
        MemoryRegion src = a.pd.allocateMemory(4096, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        src.buffer().put(0, pattern(512, 3));
        AddressHandle ah = a.pd.createAddressHandle(a.device.port(1), pb);
        long droppedBefore = ((SoftDevice) b.device).udDatagramsDropped();
        assertTrue(ua.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(src, 0, 64).ud(ah, 999, ub.attributes().qkey())));
        hosts.runUntil(() -> ((SoftDevice) b.device).udDatagramsDropped() > droppedBefore);
        assertTrue(ub.postReceive(new ReceiveWorkRequest().wrId(5).sge(dst, 0, 4096)));
        assertTrue(ua.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(src, 0, 512).ud(ah, ub.qpNumber(), ub.attributes().qkey())));
        WorkCompletion recv = await(b.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, recv.status(), recv::toString);
        assertEquals(512, recv.byteLength());
        QueuePair[] qp = rc(a, b, UnaryOperator.identity());
        assertTrue(qp[0].postSend(write(src, 512, dst, 3).remoteAddress(dst.address() + 1024)));
        List<WorkCompletion> sends = await(a.cq, 3);
        assertTrue(sends.stream().allMatch(w -> w.status() == WcStatus.SUCCESS), sends::toString);
        byte[] landed = new byte[512];
        dst.buffer().get(1024, landed);
        assertArrayEquals(pattern(512, 3), landed);
        assertEquals(4, tb.framesRejected(), "bad magic, bad length (UDP), runt, bad length (TCP)");
    }

    /**
     * The peer's death shows as its RC stream breaking (NetTransport, "Broken streams"), which fails the
     * work in the NIC's next pass: with an hour between retries nothing else can fail it within the
     * wait's bound, so the test needs no wall-clock limit of its own (it had one, 1.15 s after the kill,
     * which a loaded machine can overrun by keeping the one thread that drives every host off the CPU).
     */
    @Test
    void aPeerThatDiesMidTransferFailsOutstandingWorkWhenItsStreamBreaksAndSparesOtherPeers() {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        Side c = new Side(hosts.host("c"));
        QueuePair[] ab = rc(a, b, x -> x.retryCount(2).retryTimeoutNs(HOUR_NS).maxSendWr(64));
        QueuePair[] ac = rc(a, c, x -> x.retryCount(2).retryTimeoutNs(HOUR_NS));
        MemoryRegion src = a.pd.allocateMemory(256 << 10, Access.LOCAL_WRITE);
        MemoryRegion dstB = b.pd.allocateMemory(256 << 10, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        MemoryRegion dstC = c.pd.allocateMemory(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        assertTrue(ab[0].postSend(write(src, 256 << 10, dstB, 0)));
        assertEquals(WcStatus.SUCCESS, await(a.cq, 1).get(0).status());
        for (int i = 1; i <= 40; i++) {
            assertTrue(ab[0].postSend(write(src, 256 << 10, dstB, i)));
        }
        hosts.progress();
        hosts.kill(b.provider);
        List<WorkCompletion> wcs = new ArrayList<>();
        hosts.runUntil(() -> {
            a.cq.poll(64, wc -> wcs.add(wc.copy()));
            return wcs.size() >= 40;
        });
        assertEquals(QpState.ERROR, ab[0].state());
        List<WcStatus> statuses = wcs.stream().map(WorkCompletion::status).toList();
        int firstError = 0;
        while (statuses.get(firstError) == WcStatus.SUCCESS) {
            firstError++;
        }
        assertEquals(WcStatus.RETRY_EXC_ERR, statuses.get(firstError), statuses::toString);
        assertTrue(statuses.subList(firstError + 1, statuses.size()).stream().allMatch(s -> s == WcStatus.WR_FLUSH_ERR), statuses::toString);
        String failed = wcs.stream().filter(w -> w.status() == WcStatus.RETRY_EXC_ERR).findFirst().orElseThrow().toString();
        assertTrue(failed.contains("127.0.0.1") && failed.contains("broke"), failed);
        src.buffer().put(0, pattern(100, 9));
        assertTrue(ac[0].postSend(write(src, 100, dstC, 99)));
        WorkCompletion other = await(a.cq, 1).get(0);
        assertEquals(WcStatus.SUCCESS, other.status(), "the QP to another peer is unaffected: " + other);
        byte[] landed = new byte[100];
        dstC.buffer().get(0, landed);
        assertArrayEquals(pattern(100, 9), landed);
        assertTrue(hosts.transportOf(a.provider).streamsBroken() >= 1);
    }

    /** As above: an hour between retries, so only the broken stream can flush the receives within the wait's bound. */
    @Test
    void aReceiveOnlyQueuePairGoesToErrorAndFlushesItsReceivesWhenThePeerDies() {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        QueuePair[] qp = rc(a, b, x -> x.retryCount(2).retryTimeoutNs(HOUR_NS));
        QueuePair receiver = qp[0];
        MemoryRegion src = b.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = a.pd.allocateMemory(64 * 4, Access.LOCAL_WRITE);
        for (int i = 0; i < 4; i++) {
            assertTrue(receiver.postReceive(new ReceiveWorkRequest().wrId(100 + i).sge(dst, 64L * i, 64)));
        }
        assertTrue(qp[1].postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(src, 0, 64)));
        assertEquals(WcStatus.SUCCESS, await(a.cq, 1).get(0).status(), "the stream works before the peer dies");
        assertEquals(WcStatus.SUCCESS, await(b.cq, 1).get(0).status());

        hosts.kill(b.provider);
        List<WorkCompletion> flushed = new ArrayList<>();
        hosts.runUntil(() -> {
            a.cq.poll(8, wc -> flushed.add(wc.copy()));
            return flushed.size() >= 3;
        });
        assertEquals(QpState.ERROR, receiver.state());
        assertEquals(List.of(101L, 102L, 103L), flushed.stream().map(WorkCompletion::wrId).toList());
        assertTrue(flushed.stream().allMatch(w -> w.status() == WcStatus.WR_FLUSH_ERR), flushed::toString);
        // with no send to carry it, the flushed receives say why (the user saw a bare "QP is in ERROR" before)
        assertTrue(flushed.stream().allMatch(w -> w.detail().contains("the peer closed the stream")), flushed::toString);
        assertTrue(hosts.transportOf(a.provider).streamsBroken() >= 1);
    }

    @Test
    void anRkeyOfARegionThePeerDeregisteredFailsWithRemoteAccessErrorAndTouchesNothing() {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        QueuePair[] qp = rc(a, b, UnaryOperator.identity());
        QueuePair[] spare = rc(a, b, UnaryOperator.identity());
        MemoryRegion src = a.pd.allocateMemory(4096, Access.LOCAL_WRITE);
        MemoryRegion gone = b.pd.allocateMemory(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        MemoryRegion kept = b.pd.allocateMemory(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        long goneAddress = gone.address();
        int goneRkey = gone.rkey();
        gone.close();
        src.buffer().put(0, pattern(64, 1));
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, 64)
            .remoteAddress(goneAddress).rkey(goneRkey)));
        WorkCompletion wc = await(a.cq, 1).get(0);
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
        assertTrue(wc.toString().contains(Integer.toHexString(goneRkey)), wc::toString);
        assertEquals(QpState.ERROR, qp[0].state());
        assertTrue(spare[0].postSend(write(src, 64, kept, 2)));
        assertEquals(WcStatus.SUCCESS, await(a.cq, 1).get(0).status(), "another QP between the same hosts goes on");
        byte[] landed = new byte[64];
        kept.buffer().get(0, landed);
        assertArrayEquals(pattern(64, 1), landed);
    }

    @Test
    void messagesAboveTheNegotiatedSizeFailAndTheNextOnesGetThrough() {
        Side a = new Side(hosts.host("a"));
        Side b = new Side(hosts.host("b"));
        QueuePair ua = a.qp(QpType.UD, UnaryOperator.identity());
        QueuePair ub = b.qp(QpType.UD, UnaryOperator.identity());
        MemoryRegion src = a.pd.allocateMemory(16 << 10, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(16 << 10, Access.LOCAL_WRITE);
        AddressHandle ah = a.pd.createAddressHandle(a.device.port(1), b.device.port(1).address());
        int mtu = a.device.port(1).mtuBytes();
        assertTrue(ub.postReceive(new ReceiveWorkRequest().wrId(10).sge(dst, 0, 8192)));
        assertTrue(ua.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(src, 0, mtu + 1).ud(ah, ub.qpNumber(), ub.attributes().qkey())));
        WorkCompletion tooBig = await(a.cq, 1).get(0);
        assertEquals(WcStatus.LOC_LEN_ERR, tooBig.status(), tooBig::toString);
        assertTrue(tooBig.toString().contains(String.valueOf(mtu + 1)), tooBig::toString);
        assertTrue(ua.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(src, 0, mtu).ud(ah, ub.qpNumber(), ub.attributes().qkey())));
        assertEquals(WcStatus.SUCCESS, await(a.cq, 1).get(0).status());
        WorkCompletion got = await(b.cq, 1).get(0);
        assertEquals(mtu, got.byteLength(), "a datagram of exactly the MTU gets through");

        QueuePair[] qp = rc(a, b, UnaryOperator.identity());
        assertTrue(qp[1].postReceive(new ReceiveWorkRequest().wrId(20).sge(dst, 8192, 1024)));
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(3).opcode(WrOpcode.SEND).sge(src, 0, 4096)));
        WorkCompletion sender = await(a.cq, 1).get(0);
        WorkCompletion receiver = await(b.cq, 1).get(0);
        assertEquals(WcStatus.REM_INV_REQ_ERR, sender.status(), sender::toString);
        assertEquals(WcStatus.LOC_LEN_ERR, receiver.status(), receiver::toString);
        assertTrue(receiver.toString().contains("4096") && receiver.toString().contains("1024"), receiver::toString);
        assertTrue(ub.postReceive(new ReceiveWorkRequest().wrId(11).sge(dst, 0, 8192)));
        assertTrue(ua.postSend(new SendWorkRequest().wrId(4).opcode(WrOpcode.SEND).sge(src, 0, 100).ud(ah, ub.qpNumber(), ub.attributes().qkey())));
        assertEquals(11, await(b.cq, 1).get(0).wrId(), "UD on the same hosts is unaffected");
    }

    @Test
    void anUnknownHostInAnAddressIsRejectedNamingIt() {
        Side a = new Side(hosts.host("a"));
        PortAddress nowhere = new PortAddress("net", "no-such-host.invalid", 7000);
        VerbsException e = assertThrows(VerbsException.class, () -> a.pd.createAddressHandle(a.device.port(1), nowhere));
        assertTrue(e.getMessage().contains("no-such-host.invalid"), e::getMessage);
        QueuePair qp = a.qp(QpType.RC, UnaryOperator.identity());
        VerbsException e2 = assertThrows(VerbsException.class,
            () -> qp.connect(new io.rdmaflux.verbs.QpEndpoint(nowhere, 5, 0, 4096)));
        assertTrue(e2.getMessage().contains("unknown host"), e2::getMessage);
        VerbsException e3 = assertThrows(VerbsException.class,
            () -> a.pd.createAddressHandle(a.device.port(1), new PortAddress("mem", "soft0", 1)));
        assertTrue(e3.getMessage().contains("not on the net fabric"), e3::getMessage);
    }

    @Test
    void bindingAPortInUseFailsNamingTheAddress() {
        SoftProvider a = hosts.host("a");
        int taken = a.devices().get(0).port(1).address().port();
        VerbsException e = assertThrows(VerbsException.class,
            () -> hosts.host("b", NetTransportConfig.builder().address("127.0.0.1").basePort(taken).build()));
        assertTrue(e.getMessage().contains("net://127.0.0.1:" + taken), e::getMessage);
        assertTrue(e.getMessage().contains("in use"), e::getMessage);
    }

    @Test
    void anUnknownLocalAddressIsRejectedNamingIt() {
        VerbsException e = assertThrows(VerbsException.class, () -> NetTransportConfig.builder().address("no-such-host.invalid"));
        assertTrue(e.getMessage().contains("no-such-host.invalid"), e::getMessage);
    }
}
