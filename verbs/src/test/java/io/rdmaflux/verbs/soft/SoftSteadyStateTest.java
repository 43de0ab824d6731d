package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NoLeaksExtension.class)
class SoftSteadyStateTest {
    private int completions;

    @Test
    void steadyStateTrafficAllocatesNoFrames() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            Device da = nodes.a().devices().get(0);
            Device db = nodes.b().devices().get(0);
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue ca = da.createCompletionQueue(256);
            CompletionQueue cb = db.createCompletionQueue(256);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
            SoftTwoNodes.connectRc(qa, qb);
            MemoryRegion src = pa.allocateMemory(32, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.allocateMemory(32 * 64, Access.LOCAL_WRITE);
            SendWorkRequest send = new SendWorkRequest().sge(src, 0, 32);
            ReceiveWorkRequest recv = new ReceiveWorkRequest();
            int framesAfterWarmUp = 0;
            for (int round = 0; round < 200; round++) {
                for (int i = 0; i < 64; i++) {
                    assertTrue(qb.postReceive(recv.wrId(i).sge(dst, i * 32L, 32)));
                    assertTrue(qa.postSend(send.wrId(i).signaled(i == 63)));
                }
                completions = 0;
                nodes.runUntil(() -> {
                    cb.poll(64, wc -> completions++);
                    ca.poll(64, wc -> completions++);
                    return completions == 65;
                }, 0, 1000);
                if (round == 10) {
                    framesAfterWarmUp = nodes.a().softDevice(0).framesAllocated() + nodes.b().softDevice(0).framesAllocated();
                }
            }
            assertEquals(framesAfterWarmUp, nodes.a().softDevice(0).framesAllocated() + nodes.b().softDevice(0).framesAllocated(),
                "frames are pooled: none allocated after warm-up");
            assertTrue(framesAfterWarmUp <= 2 * 64 + 8, "pool sized by frames in flight: " + framesAfterWarmUp);
        }
    }
}
