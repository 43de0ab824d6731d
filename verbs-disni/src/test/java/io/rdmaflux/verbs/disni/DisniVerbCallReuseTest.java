package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Work requests go through stateful verb calls built once and re-executed: the double counts every
 * call it builds and every execution, so a provider that built a call (or a DiSNI work request) per
 * post would show here.
 */
class DisniVerbCallReuseTest {
    private static final int ROUNDS = 500;

    @Test
    void steadyStateSendsWritesReadsAndReceivesBuildNoNewCalls() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair[] qp = t.connected();
            MemoryRegion src = t.pa.allocateMemory(64 * 1024, Access.ALL);
            MemoryRegion dst = t.pb.allocateMemory(64 * 1024, Access.ALL);
            SoftSeam.Counters c = t.fx.seam.counters;
            SendWorkRequest wr = new SendWorkRequest();
            ReceiveWorkRequest rwr = new ReceiveWorkRequest();
            long sendBuilds = -1;
            long recvBuilds = -1;
            long sendExecutes = 0;
            long recvExecutes = 0;
            for (int round = 0; round < ROUNDS; round++) {
                if (round == 4) {
                    // the first rounds built one call per (opcode, SGE count) and per receive slot (4 slots)
                    sendBuilds = c.sendCallsBuilt;
                    recvBuilds = c.recvCallsBuilt;
                    sendExecutes = c.sendExecutes;
                    recvExecutes = c.recvExecutes;
                }
                int len = 1 + (round * 37) % 4000;
                long off = (round * 64L) % 16_384;
                assertTrue(qp[1].postReceive(rwr.wrId(round % 4).sge(dst, 1024L * (round % 4), 1024)));
                assertTrue(qp[0].postSend(wr.reset().wrId(round).opcode(WrOpcode.SEND).sge(src, off, Math.min(len, 1024))));
                assertTrue(qp[0].postSend(wr.reset().wrId(round).opcode(WrOpcode.RDMA_WRITE).sge(src, off, len)
                    .remoteAddress(dst.address() + 8192 + off).rkey(dst.rkey()).signaled(round % 2 == 0)));
                assertTrue(qp[0].postSend(wr.reset().wrId(round).opcode(WrOpcode.RDMA_READ).sge(src, 32_768 + off, len)
                    .remoteAddress(dst.address() + off).rkey(dst.rkey())));
                List<WorkCompletion> sends = t.await(t.ca, round % 2 == 0 ? 3 : 2);
                for (WorkCompletion w : sends) {
                    assertEquals(WcStatus.SUCCESS, w.status(), w::toString);
                    assertEquals(round, w.wrId());
                }
                WorkCompletion r = t.await(t.cb, 1).get(0);
                assertEquals(round % 4, r.wrId());
                assertEquals(Math.min(len, 1024), r.byteLength());
            }
            assertEquals(sendBuilds, c.sendCallsBuilt, "no send call built after the first rounds");
            assertEquals(recvBuilds, c.recvCallsBuilt, "receive slots reposted with the same id and SGE re-execute their call");
            assertEquals(3L * (ROUNDS - 4), c.sendExecutes - sendExecutes, "one execution per send work request");
            assertEquals(ROUNDS - 4, c.recvExecutes - recvExecutes, "one execution per receive");
            assertEquals(3, sendBuilds, "one call per opcode with one SGE");
            assertEquals(4, recvBuilds, "one call per receive slot");
            assertEquals(2, c.pollCallsBuilt, "one poll call per device, built at open");
            assertTrue(c.pollExecutes > ROUNDS, "polls re-execute it");
        }
    }

    @Test
    void aRepeatedImmediateReusesItsCallAndDistinctOnesAreBoundedPerQp() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair[] qp = t.connected();
            MemoryRegion src = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            MemoryRegion dst = t.pb.allocateMemory(64 * 8, Access.LOCAL_WRITE);
            SoftSeam.Counters c = t.fx.seam.counters;
            SendWorkRequest wr = new SendWorkRequest();
            ReceiveWorkRequest rwr = new ReceiveWorkRequest();
            long before = c.sendCallsBuilt;
            for (int i = 0; i < 100; i++) {
                assertTrue(qp[1].postReceive(rwr.wrId(i % 8).sge(dst, 64L * (i % 8), 64)));
                assertTrue(qp[0].postSend(wr.reset().wrId(i).opcode(WrOpcode.SEND_WITH_IMM).immediate(0xC0FFEE).sge(src, 0, 16)));
                t.await(t.ca, 1);
                WorkCompletion r = t.await(t.cb, 1).get(0);
                assertEquals(0xC0FFEE, r.immediate(), "immediate data crosses in host order (htonl/ntohl in the provider)");
            }
            assertEquals(before + 1, c.sendCallsBuilt, "one call for one immediate value");
            for (int i = 0; i < SendPoster.MAX_IMMEDIATE_CALLS + 10; i++) {
                assertTrue(qp[1].postReceive(rwr.wrId(i % 8).sge(dst, 64L * (i % 8), 64)));
                assertTrue(qp[0].postSend(wr.reset().wrId(i).opcode(WrOpcode.SEND_WITH_IMM).immediate(i).sge(src, 0, 16)));
                t.await(t.ca, 1);
                assertEquals(i, t.await(t.cb, 1).get(0).immediate());
            }
            // DiSNI 2.0 cannot change a built call's imm_data: each new value builds one (the documented deviation)
            assertEquals(before + 1 + SendPoster.MAX_IMMEDIATE_CALLS + 10, c.sendCallsBuilt);
            assertEquals(((DisniQueuePair) qp[0]).verbCallsBuilt(), c.sendCallsBuilt - before + 0, "the QP's count agrees with the double's");
        }
    }

    @Test
    void aReceiveSlotRepostedWithOtherSgesIsRebuiltAndLandsThere() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair[] qp = t.connected();
            MemoryRegion src = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            MemoryRegion dst = t.pb.allocateMemory(256, Access.LOCAL_WRITE);
            src.buffer().put(0, new byte[] {1, 2, 3, 4});
            SoftSeam.Counters c = t.fx.seam.counters;
            long before = c.recvCallsBuilt;
            ReceiveWorkRequest rwr = new ReceiveWorkRequest();
            SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i < 3; i++) {
                assertTrue(qp[1].postReceive(rwr.wrId(7).sge(dst, 64L * i, 64)));
                assertTrue(qp[0].postSend(wr.reset().wrId(i).sge(src, 0, 4)));
                t.await(t.ca, 1);
                assertEquals(7, t.await(t.cb, 1).get(0).wrId());
                byte[] got = new byte[4];
                dst.buffer().get(64 * i, got);
                assertArrayEquals(new byte[] {1, 2, 3, 4}, got, "the message landed at the new SGE");
            }
            assertEquals(before + 3, c.recvCallsBuilt);
        }
    }
}
