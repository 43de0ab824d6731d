package io.rdmaflux.verbs.soft.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftPort;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * RC corruption on the IP fabric: the rail's fault model corrupts RC frames before the TCP stream (TCP
 * itself would never hand a corrupted segment up), and the frame's ICRC crosses the wire in the frame
 * header, so the receiving host's NIC drops every corrupted frame as on the in-JVM fabric, and the
 * requester retransmits. {@value #N} SENDs must arrive byte-exact, once, in order.
 */
class NetIcrcTest {
    static final int N = 300;
    static final int SLOT = 128;

    @Test
    void corruptedRcFramesCrossTcpAndAreDroppedByTheReceiversIcrcCheck() {
        try (NetLoopbackFixture fx = new NetLoopbackFixture()) {
            RailConfig corrupt = RailConfig.builder().rcCorruptRate(0.05).rcFaultSeed(41).build();
            fx.setRail(fx.deviceA().port(1), corrupt);
            fx.setRail(fx.deviceB().port(1), corrupt);
            Device da = fx.deviceA();
            Device db = fx.deviceB();
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue ca = da.createCompletionQueue(1024);
            CompletionQueue cb = db.createCompletionQueue(1024);
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).retryTimeoutNs(2_000_000).build());
            QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            MemoryRegion src = pa.allocateMemory((long) SLOT * N, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.allocateMemory((long) SLOT * N, Access.LOCAL_WRITE);
            for (int i = 0; i < SLOT * N; i++) {
                src.buffer().put(i, (byte) (i * 13 + 7));
            }
            ReceiveWorkRequest rwr = new ReceiveWorkRequest();
            int receives = 0;
            SendWorkRequest wr = new SendWorkRequest();
            List<String> failures = new ArrayList<>();
            int[] done = {0, 0}; // send completions, receive completions
            int posted = 0;
            for (int pass = 0; (done[0] < N || done[1] < N) && failures.isEmpty(); pass++) {
                assertTrue(pass < 2_000_000, "stuck after " + done[0] + " sends and " + done[1] + " receives of " + N);
                while (posted < N && qa.postSend(wr.reset().wrId(posted).opcode(WrOpcode.SEND).sge(src, (long) posted * SLOT, SLOT).signaled(true))) {
                    posted++;
                }
                while (receives < N && qb.postReceive(rwr.wrId(receives).sge(dst, (long) receives * SLOT, SLOT))) {
                    receives++;
                }
                int progress = fx.progress();
                int got = ca.poll(64, wc -> {
                    if (wc.status() != WcStatus.SUCCESS || wc.wrId() != done[0]) {
                        failures.add("send completion " + done[0] + ": " + wc);
                    }
                    done[0]++;
                }) + cb.poll(64, wc -> {
                    if (wc.status() != WcStatus.SUCCESS || wc.wrId() != done[1] || wc.byteLength() != SLOT) {
                        failures.add("receive completion " + done[1] + ": " + wc);
                    }
                    done[1]++;
                });
                if (progress == 0 && got == 0) {
                    fx.advanceNs(20_000);
                }
            }
            assertEquals(List.of(), failures);
            for (int i = 0; i < SLOT * N; i++) {
                assertEquals((byte) (i * 13 + 7), dst.buffer().get(i), "byte " + i);
                assertEquals((byte) (i * 13 + 7), src.buffer().get(i), "the sender's memory is never corrupted, byte " + i);
            }
            SoftDevice sa = fx.hostA().softDevice(0);
            SoftDevice sb = fx.hostB().softDevice(0);
            long corrupted = ((SoftPort) da.port(1)).rcFramesCorrupted() + ((SoftPort) db.port(1)).rcFramesCorrupted();
            assertTrue(corrupted > 0, "frames were corrupted");
            assertEquals(corrupted, sa.icrcDrops() + sb.icrcDrops(), "every corrupted frame is dropped by the receiver's ICRC check");
        }
    }
}
