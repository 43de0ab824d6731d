package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The CQ packs small fields into one word per completion: every field must come back exactly, at the extremes too. */
@ExtendWith(NoLeaksExtension.class)
class SoftCompletionQueueTest {
    @Test
    void everyFieldRoundTripsThroughThePackedRingIncludingExtremesAndReusedSlots() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            SoftCompletionQueue cq = (SoftCompletionQueue) nodes.a().softDevice(0).createCompletionQueue(2);
            List<WorkCompletion> seen = new ArrayList<>();
            WcStatus lastStatus = WcStatus.values()[WcStatus.values().length - 1];
            WcOpcode lastOpcode = WcOpcode.values()[WcOpcode.values().length - 1];
            // An error with a reason, then a success in the same slot after wrap-around: the reason must not linger.
            cq.add(Long.MIN_VALUE, lastStatus, lastOpcode, Integer.MAX_VALUE, true, -1, Integer.MAX_VALUE, -2, "bad lkey 0x1");
            cq.add(-1L, WcStatus.SUCCESS, WcOpcode.RECV, 0, false, 7, 1, 0, "");
            assertEquals(2, cq.poll(8, wc -> seen.add(wc.copy())));
            cq.add(42L, WcStatus.SUCCESS, WcOpcode.RDMA_READ, -1, true, 0x8000_0000, -1, Integer.MIN_VALUE, "");
            assertEquals(1, cq.poll(8, wc -> seen.add(wc.copy())));

            assertEquals(new WorkCompletion().set(Long.MIN_VALUE, lastStatus, lastOpcode, Integer.MAX_VALUE, true, -1,
                Integer.MAX_VALUE, -2, "bad lkey 0x1").toString(), seen.get(0).toString());
            assertEquals("bad lkey 0x1", seen.get(0).detail());
            assertEquals(-2, seen.get(0).sourceQpn());
            assertEquals(new WorkCompletion().set(-1L, WcStatus.SUCCESS, WcOpcode.RECV, 0, false, 0, 1, 0, "").toString(),
                seen.get(1).toString());
            assertEquals(0, seen.get(1).immediate(), "no immediate: reads as 0");
            WorkCompletion third = seen.get(2);
            assertEquals(42L, third.wrId());
            assertEquals(WcOpcode.RDMA_READ, third.opcode());
            assertEquals(-1, third.byteLength());
            assertEquals(0x8000_0000, third.immediate());
            assertEquals(-1, third.qpNumber());
            assertEquals(Integer.MIN_VALUE, third.sourceQpn());
            assertEquals("", third.detail(), "the slot's earlier error reason is gone");
            cq.close();
        }
    }
}
