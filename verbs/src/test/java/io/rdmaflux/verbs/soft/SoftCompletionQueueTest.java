package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
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

    /** A CQ sized for the worst case starts small and grows below its capacity; nothing is lost or reordered on the way. */
    @Test
    void theRingStartsSmallAndGrowsKeepingEveryCompletionInOrderUpToTheCapacityThenOverruns() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            SoftCompletionQueue cq = (SoftCompletionQueue) nodes.a().softDevice(0).createCompletionQueue(200);
            assertEquals(SoftCompletionQueue.INITIAL_SLOTS, cq.slots(), "a new CQ costs its initial slots only");
            List<Long> seen = new ArrayList<>();
            // poll a few first, so the unpolled entries straddle the wrap when the ring grows
            for (long k = 0; k < 10; k++) {
                assertTrue(cq.hasRoom());
                cq.add(k, WcStatus.SUCCESS, WcOpcode.SEND, (int) k, false, 0, 1, 0, k % 7 == 0 ? "detail " + k : "");
            }
            assertEquals(6, cq.poll(6, wc -> seen.add(wc.wrId())));
            long next = 10;
            while (cq.hasRoom()) {
                cq.add(next, WcStatus.SUCCESS, WcOpcode.SEND, (int) next, false, 0, 1, 0, next % 7 == 0 ? "detail " + next : "");
                next++;
            }
            assertEquals(6 + 200, next, "room for exactly the capacity beyond what was polled");
            assertEquals(256, cq.slots(), "grown to the power of two at least the capacity, no further");
            assertTrue(cq.overrun, "full at the capacity: overrun, as before");
            List<String> details = new ArrayList<>();
            while (cq.poll(64, wc -> {
                seen.add(wc.wrId());
                assertEquals((int) wc.wrId(), wc.byteLength());
                if (!wc.detail().isEmpty()) {
                    details.add(wc.detail());
                }
            }) > 0) {
                // drain
            }
            for (int k = 0; k < seen.size(); k++) {
                assertEquals(k, seen.get(k).longValue(), "completion " + k + " in order");
            }
            assertEquals(next, seen.size());
            assertEquals("detail 7", details.get(0), "error details move with their completion");
            assertFalse(details.contains("detail 0"), "completion 0 was polled before the growth, with its detail: " + details);
            cq.close();
        }
    }

    /** The engine grows the ring while another thread polls: every completion arrives once and in order. */
    @Test
    void growingWhileAnotherThreadPollsLosesAndReordersNothing() throws Exception {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            SoftCompletionQueue cq = (SoftCompletionQueue) nodes.a().softDevice(0).createCompletionQueue(4096);
            int total = 200_000;
            AtomicReference<String> problem = new AtomicReference<>();
            Thread consumer = new Thread(() -> {
                long[] expected = {0};
                while (expected[0] < total && problem.get() == null) {
                    cq.poll(32, wc -> {
                        if (wc.wrId() != expected[0] || wc.byteLength() != (int) expected[0]) {
                            problem.compareAndSet(null, "expected " + expected[0] + " but polled " + wc.wrId() + "/" + wc.byteLength());
                        }
                        expected[0]++;
                    });
                }
            }, "cq-growth-consumer");
            consumer.start();
            for (long k = 0; k < total && problem.get() == null; k++) {
                while (!cq.hasRoom()) {
                    cq.overrun = false;
                    Thread.onSpinWait();
                }
                cq.add(k, WcStatus.SUCCESS, WcOpcode.RECV, (int) k, false, 0, 1, 0, "");
            }
            consumer.join(60_000);
            assertFalse(consumer.isAlive(), "the consumer finished");
            assertEquals(null, problem.get());
            assertTrue(cq.slots() >= SoftCompletionQueue.INITIAL_SLOTS && cq.slots() <= 4096, "slots " + cq.slots());
            cq.close();
        }
    }
}
