package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Atomics over rails that lose, duplicate and reorder RC frames (requests and responses), in virtual
 * time: a duplicate or retransmitted atomic request must be answered from the responder's saved result
 * ({@link AtomicReplayCache}), never executed twice. One requester adds 1 {@value #N} times, so the
 * original values must be exactly 0, 1, ..., N-1 in completion order and the word must end at N; a
 * second execution of any request would skip a value and overshoot the sum.
 */
@ExtendWith(NoLeaksExtension.class)
class SoftAtomicReplayTest {
    static final int N = 1_000;
    private static final long RETRY_TIMEOUT_NS = 20_000;

    @Test
    void duplicatedAndRetransmittedAtomicsExecuteOnce() {
        RailConfig rail = RailConfig.builder().rcReorderDelayNs(3_000).rcLossRate(0.05).rcDuplicateRate(0.10)
            .rcReorderRate(0.05).rcFaultSeed(21).build();
        long replays = run(rail);
        assertTrue(replays > 0, "duplicates reached the responder and were answered from the cache: " + replays);
    }

    @Test
    void aLateResponseMakesTheRequesterRetransmitAndTheResponderReplay() {
        // every response is reordered behind the retry timeout: the requester retransmits before it arrives
        RailConfig rail = RailConfig.builder().rcReorderDelayNs(2 * RETRY_TIMEOUT_NS).rcReorderRate(0.02).rcFaultSeed(22).build();
        long replays = run(rail);
        assertTrue(replays > 0, "a retransmitted atomic was answered from the cache: " + replays);
    }

    /** Runs N fetch-and-adds of 1 over {@code rail}; returns the responder's replay count. */
    private static long run(RailConfig rail) {
        try (SoftTwoNodes nodes = SoftTwoNodes.create(1, rail, b -> b)) {
            ProtectionDomain pa = nodes.a().devices().get(0).allocateProtectionDomain();
            ProtectionDomain pb = nodes.b().devices().get(0).allocateProtectionDomain();
            CompletionQueue ca = nodes.a().devices().get(0).createCompletionQueue(4096);
            CompletionQueue cb = nodes.b().devices().get(0).createCompletionQueue(4096);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).retryTimeoutNs(RETRY_TIMEOUT_NS).retryCount(7).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).retryTimeoutNs(RETRY_TIMEOUT_NS).build());
            SoftTwoNodes.connectRc(qa, qb);
            MemoryRegion results = pa.allocateMemory(8L * N, Access.LOCAL_WRITE);
            MemoryRegion counter = pb.allocateMemory(8, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC);
            SendWorkRequest wr = new SendWorkRequest();
            int[] posted = {0};
            List<String> failures = new ArrayList<>();
            int[] completed = {0};
            nodes.runUntil(() -> {
                while (posted[0] < N && qa.postSend(wr.reset().wrId(posted[0])
                    .fetchAndAdd(counter.address(), counter.rkey(), 1, results, 8L * posted[0]))) {
                    posted[0]++;
                }
                ca.poll(64, wc -> {
                    int k = completed[0]++;
                    long original = results.buffer().order(ByteOrder.nativeOrder()).getLong(8 * k);
                    if (wc.status() != WcStatus.SUCCESS || wc.opcode() != WcOpcode.FETCH_ADD || wc.wrId() != k || original != k) {
                        failures.add("completion " + k + " (original " + original + "): " + wc);
                    }
                });
                return completed[0] == N || !failures.isEmpty();
            }, 1_000, 2_000_000);
            assertEquals(List.of(), failures.subList(0, Math.min(5, failures.size())));
            for (int i = 0; i < 200; i++) {
                nodes.progress();
                nodes.clock().advance(1_000);
            }
            assertEquals(N, counter.buffer().order(ByteOrder.nativeOrder()).getLong(0), "each atomic executed exactly once");
            assertEquals(0, cb.poll(16, wc -> { }), "no completion at the responder");
            SoftPort a = nodes.a().softDevice(0).softPort(1);
            SoftPort b = nodes.b().softDevice(0).softPort(1);
            assertTrue(a.rcFramesLost() + b.rcFramesLost() + a.rcFramesDuplicated() + b.rcFramesDuplicated()
                + a.rcFramesReordered() + b.rcFramesReordered() > 0, "the rail injected faults");
            return nodes.b().softDevice(0).rcAtomicReplays();
        }
    }
}
