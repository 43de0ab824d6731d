package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The RC requester's ACK timer in virtual time: it runs from when a frame leaves the shaped link, not from the last ACK. */
@ExtendWith(NoLeaksExtension.class)
class SoftRetryTimerTest {
    private static final long GB = 1_000_000_000L;
    private static final long RETRY_TIMEOUT_NS = 100_000;
    private static final long LATENCY_NS = 10_000;
    /** 1 MB at 1 GB/s: 1 ms on the wire, 10x the retry timeout. */
    private static final int LARGE = 1_000_000;

    private static SoftTwoNodes nodes() {
        return SoftTwoNodes.create(1, RailConfig.builder().bandwidthBytesPerSec(GB).latencyNs(LATENCY_NS).build());
    }

    @Test
    void largeWriteQueuedBehindAnAcknowledgedOneIsNotRetransmittedWhileStillSerializing() {
        try (SoftTwoNodes nodes = nodes()) {
            ProtectionDomain pa = nodes.a().devices().get(0).allocateProtectionDomain();
            ProtectionDomain pb = nodes.b().devices().get(0).allocateProtectionDomain();
            CompletionQueue ca = nodes.a().devices().get(0).createCompletionQueue(16);
            CompletionQueue cb = nodes.b().devices().get(0).createCompletionQueue(16);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).retryTimeoutNs(RETRY_TIMEOUT_NS).retryCount(3).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
            SoftTwoNodes.connectRc(qa, qb);
            MemoryRegion src = pa.allocateMemory(LARGE, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.allocateMemory(LARGE, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            SendWorkRequest wr = new SendWorkRequest().opcode(WrOpcode.RDMA_WRITE).remoteAddress(dst.address()).rkey(dst.rkey());
            // A small write first: its ACK arrives while the large one is still on the wire.
            assertTrue(qa.postSend(wr.wrId(1).sge(src, 0, 64).signaled(true)));
            assertTrue(qa.postSend(wr.wrId(2).sge(src, 0, LARGE).signaled(true)));

            List<WorkCompletion> done = nodes.awaitCompletions(ca, 2);

            assertEquals(WcStatus.SUCCESS, done.get(0).status(), done.get(0)::toString);
            assertEquals(WcStatus.SUCCESS, done.get(1).status(), done.get(1)::toString);
            assertEquals(2L, done.get(1).wrId());
            assertEquals(0L, nodes.a().softDevice(0).rcRetransmits(), "no go-back-N retransmission");
            long serialization = (long) LARGE * 1_000_000_000L / GB;
            assertTrue(nodes.clock().nanoTime() < serialization + 4 * LATENCY_NS + 10_000,
                "completed in one pass over the wire: " + nodes.clock().nanoTime() + " ns");
        }
    }

    @Test
    void lostFramesAreStillRetransmittedAfterTheTimeout() {
        try (SoftTwoNodes nodes = nodes()) {
            ProtectionDomain pa = nodes.a().devices().get(0).allocateProtectionDomain();
            ProtectionDomain pb = nodes.b().devices().get(0).allocateProtectionDomain();
            CompletionQueue ca = nodes.a().devices().get(0).createCompletionQueue(16);
            CompletionQueue cb = nodes.b().devices().get(0).createCompletionQueue(16);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).retryTimeoutNs(RETRY_TIMEOUT_NS).retryCount(2).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
            SoftTwoNodes.connectRc(qa, qb);
            MemoryRegion src = pa.allocateMemory(64, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            nodes.a().softDevice(0).softPort(1).setState(PortState.DOWN);
            assertTrue(qa.postSend(new SendWorkRequest().opcode(WrOpcode.RDMA_WRITE).wrId(7).sge(src, 0, 64)
                .remoteAddress(dst.address()).rkey(dst.rkey())));

            List<WorkCompletion> done = nodes.awaitCompletions(ca, 1);

            assertEquals(WcStatus.RETRY_EXC_ERR, done.get(0).status(), done.get(0)::toString);
            assertEquals(2L, nodes.a().softDevice(0).rcRetransmits(), "one go-back-N per retry");
        }
    }
}
