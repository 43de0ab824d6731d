package io.rdmaflux.verbs.soft.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NoLeaksExtension.class)
class NetTransportTest {
    private final NetHosts hosts = new NetHosts();

    @AfterEach
    void close() {
        hosts.close();
    }

    @Test
    void anRcQueuePairSharesOneTcpConnectionBothWays() {
        SoftProvider a = hosts.host("a");
        SoftProvider b = hosts.host("b");
        ProtectionDomain pa = a.devices().get(0).allocateProtectionDomain();
        ProtectionDomain pb = b.devices().get(0).allocateProtectionDomain();
        CompletionQueue ca = a.devices().get(0).createCompletionQueue(64);
        CompletionQueue cb = b.devices().get(0).createCompletionQueue(64);
        QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, a.devices().get(0).port(1)).cq(ca).build());
        QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, b.devices().get(0).port(1)).cq(cb).build());
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        MemoryRegion ma = pa.allocateMemory(256, Access.LOCAL_WRITE);
        MemoryRegion mb = pb.allocateMemory(256, Access.LOCAL_WRITE);
        assertTrue(qa.postReceive(new ReceiveWorkRequest().wrId(1).sge(ma, 128, 128)));
        assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(2).sge(mb, 128, 128)));
        assertTrue(qa.postSend(new SendWorkRequest().wrId(3).opcode(WrOpcode.SEND).sge(ma, 0, 64)));
        List<WorkCompletion> atB = new ArrayList<>();
        hosts.runUntil(() -> cb.poll(1, wc -> atB.add(wc.copy())) > 0);
        assertTrue(qb.postSend(new SendWorkRequest().wrId(4).opcode(WrOpcode.SEND).sge(mb, 0, 64)));
        List<WorkCompletion> atA = new ArrayList<>();
        hosts.runUntil(() -> {
            ca.poll(4, wc -> atA.add(wc.copy()));
            cb.poll(4, wc -> atB.add(wc.copy()));
            return atA.size() == 2 && atB.size() == 2;
        });
        assertTrue(atA.stream().allMatch(w -> w.status() == WcStatus.SUCCESS) && atB.stream().allMatch(w -> w.status() == WcStatus.SUCCESS),
            () -> atA + " " + atB);
        assertEquals(1, hosts.transportOf(a).streamsOpened() + hosts.transportOf(b).streamsOpened(),
            () -> "b answers on the connection a opened: one TCP connection per QP pair (renewed " + hosts.transportOf(a).streamsRenewed()
                + " + " + hosts.transportOf(b).streamsRenewed() + ")");
    }

    @Test
    void aHostClosingRightAfterAReceiveStillAcknowledgesIt() {
        SoftProvider a = hosts.host("a");
        // b holds lone acknowledgements up to 1 ms, hoping for a frame to ride with
        SoftProvider b = hosts.host("b", NetTransportConfig.builder().ackCoalescingNs(1_000_000).build());
        ProtectionDomain pa = a.devices().get(0).allocateProtectionDomain();
        ProtectionDomain pb = b.devices().get(0).allocateProtectionDomain();
        CompletionQueue ca = a.devices().get(0).createCompletionQueue(64);
        CompletionQueue cb = b.devices().get(0).createCompletionQueue(64);
        QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, a.devices().get(0).port(1)).cq(ca).build());
        QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, b.devices().get(0).port(1)).cq(cb).build());
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        MemoryRegion ma = pa.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion mb = pb.allocateMemory(64, Access.LOCAL_WRITE);
        assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(1).sge(mb, 0, 64)));
        assertTrue(qa.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).signaled(true).sge(ma, 0, 8)));
        List<WorkCompletion> atB = new ArrayList<>();
        hosts.runUntil(() -> cb.poll(1, wc -> atB.add(wc.copy())) > 0);
        assertEquals(WcStatus.SUCCESS, atB.get(0).status());
        // b's acknowledgement is still held (no engine pass of b since); b goes away at once
        hosts.kill(b);
        List<WorkCompletion> atA = new ArrayList<>();
        hosts.runUntil(() -> ca.poll(1, wc -> atA.add(wc.copy())) > 0);
        assertEquals(WcStatus.SUCCESS, atA.get(0).status(), () -> atA.get(0).toString());
    }

    @Test
    void theCodecRoundTripsEveryHeaderFieldAndRejectsLies() {
        SoftProvider a = hosts.host("a");
        var nic = (io.rdmaflux.verbs.soft.SoftDevice) a.devices().get(0);
        hosts.runUntil(() -> true);
        ByteBuffer b = NetFrameCodec.direct(NetFrameCodec.HEADER_BYTES);
        var f = nic.claimFrame();
        f.type = FrameType.RDMA_READ_REQUEST;
        f.sourceQpn = 5;
        f.destinationQpn = 9;
        f.psn = 0xABCDEF;
        f.hasImmediate = true;
        f.immediate = -7;
        f.rkey = 0x1234_5600;
        f.qkey = 77;
        f.length = 1 << 20;
        f.remoteAddress = 0x7FFF_0000_1000L;
        f.sentAtNs = 1_000;
        f.deliverAtNs = 1_500;
        NetFrameCodec.encodeHeader(f, b, 0);
        assertEquals(NetFrameCodec.Verdict.OK, NetFrameCodec.validate(b, 0, 1 << 16), "a READ request carries no payload");
        var g = nic.claimFrame();
        assertEquals(500, NetFrameCodec.decodeHeader(b, 0, g));
        assertEquals(List.of(f.type, f.sourceQpn, f.destinationQpn, f.psn, f.hasImmediate, f.immediate, f.rkey, f.qkey, f.length, f.remoteAddress),
            List.of(g.type, g.sourceQpn, g.destinationQpn, g.psn, g.hasImmediate, g.immediate, g.rkey, g.qkey, g.length, g.remoteAddress));
        f.type = FrameType.SEND;
        NetFrameCodec.encodeHeader(f, b, 0);
        assertEquals(NetFrameCodec.Verdict.BAD_LENGTH, NetFrameCodec.validate(b, 0, 1 << 16), "a 1 MiB SEND above the 64 KiB limit");
        assertEquals(ByteOrder.LITTLE_ENDIAN, b.order());
        b.put(NetFrameCodec.VERSION_OFFSET, (byte) 2);
        assertEquals(NetFrameCodec.Verdict.BAD_VERSION, NetFrameCodec.validate(b, 0, 1 << 30));
        b.put(NetFrameCodec.VERSION_OFFSET, (byte) NetFrameCodec.VERSION).put(NetFrameCodec.TYPE_OFFSET, (byte) 99);
        assertEquals(NetFrameCodec.Verdict.BAD_TYPE, NetFrameCodec.validate(b, 0, 1 << 30));
        b.putInt(NetFrameCodec.MAGIC_OFFSET, 0x12345678);
        assertEquals(NetFrameCodec.Verdict.BAD_MAGIC, NetFrameCodec.validate(b, 0, 1 << 30));
        f.release();
        g.release();
    }
}
