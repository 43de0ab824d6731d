package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
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

@ExtendWith(NoLeaksExtension.class)
class SoftUnknownQpnTest {
    @Test
    void rcFramesForAQueuePairThatDoesNotExistAreDroppedAndCounted() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            SoftDevice da = nodes.a().softDevice(0);
            SoftDevice db = nodes.b().softDevice(0);
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue ca = da.createCompletionQueue(16);
            CompletionQueue cb = db.createCompletionQueue(16);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).retryTimeoutNs(10_000).retryCount(1).build());
            QueuePair gone = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
            QpEndpoint stale = gone.localEndpoint();
            gone.close();
            qa.connect(stale);
            MemoryRegion src = pa.allocateMemory(64, Access.LOCAL_WRITE);
            assertTrue(qa.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, 64)
                .remoteAddress(0x1000).rkey(1)));

            List<WorkCompletion> done = nodes.awaitCompletions(ca, 1);

            assertEquals(WcStatus.RETRY_EXC_ERR, done.get(0).status(), done.get(0)::toString);
            assertEquals(2L, db.rcFramesToUnknownQp(), "the first transmission and one retry reached no QP");
            assertEquals(0L, db.udDatagramsDropped(), "RC drops are not counted as UD ones");
        }
    }
}
