package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WrOpcode;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * Bytes the test thread allocates per work request in steady state, the whole path included: the
 * provider (translation, stateful verb calls, completion mapping, SPI CQ) and the double and soft NIC
 * under it (all run on this thread in INVOKER mode).
 */
class DisniAllocationTest {
    private int completions;
    private final io.rdmaflux.verbs.CompletionSink count = wc -> completions++;

    @Test
    void steadyStateSendReceiveAndWriteAllocateNothingPerWorkRequest() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported(), "no per-thread allocation counter");
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair[] qp = t.connected();
            MemoryRegion src = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            MemoryRegion dst = t.pb.allocateMemory(64 * 64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            SendWorkRequest send = new SendWorkRequest();
            SendWorkRequest write = new SendWorkRequest();
            ReceiveWorkRequest recv = new ReceiveWorkRequest();
            long tid = Thread.currentThread().getId();
            long start = 0;
            int measuredRounds = 0;
            for (int round = 0; round < 400; round++) {
                if (round == 200) {
                    start = mx.getThreadAllocatedBytes(tid);
                }
                for (int i = 0; i < 32; i++) {
                    qp[1].postReceive(recv.wrId(i).sge(dst, i * 64L, 64));
                    qp[0].postSend(send.reset().wrId(i).opcode(WrOpcode.SEND).sge(src, 0, 32).signaled(i == 31));
                    qp[0].postSend(write.reset().wrId(100 + i).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, 64)
                        .remoteAddress(dst.address() + 2048 + (i % 32) * 64L).rkey(dst.rkey()).signaled(i == 31));
                }
                completions = 0;
                for (int pass = 0; pass < 10_000 && completions < 34; pass++) {
                    if (t.fx.progress() == 0) {
                        t.fx.advanceNs(1_000);
                    }
                    t.cb.poll(64, count);
                    t.ca.poll(64, count);
                }
                if (completions != 34) {
                    throw new AssertionError("round " + round + ": " + completions + " completions");
                }
                if (round >= 200) {
                    measuredRounds++;
                }
            }
            long bytes = mx.getThreadAllocatedBytes(tid) - start;
            double perWr = bytes / (measuredRounds * 96.0);
            System.out.printf("disni steady state: %d bytes over %d work requests (%.2f B/WR)%n", bytes, measuredRounds * 96, perWr);
            // per work request nothing; a one-off of a few KB may remain (a soft completion queue doubles its ring
            // the first time more completions wait than it holds, which timing can put after round 200): a
            // per-WR allocation of even 8 B would be 150 KB here
            assertTrue(bytes < 16_384, "allocation in steady state: " + bytes + " bytes over " + measuredRounds * 96
                + " work requests (" + perWr + " B/WR)");
        }
    }
}
