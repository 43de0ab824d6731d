package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An engine pass visits only the QPs with send-side work ({@link ActiveQueuePairs}): idle QPs are not in the
 * active list, and each way a QP gets work (a post, a move to ERROR with receives to flush) brings it back
 * for the very next pass, not for the backstop scan {@value ActiveQueuePairs#SCAN_PASSES} passes later.
 */
@ExtendWith(NoLeaksExtension.class)
class SoftActiveQueuePairsTest {
    private static final int PAIRS = 100;

    private record Pairs(List<QueuePair> a, List<QueuePair> b, CompletionQueue ca, CompletionQueue cb,
                         ProtectionDomain pa, ProtectionDomain pb) {
    }

    private static Pairs connect(SoftTwoNodes nodes) {
        ProtectionDomain pa = nodes.a().devices().get(0).allocateProtectionDomain();
        ProtectionDomain pb = nodes.b().devices().get(0).allocateProtectionDomain();
        CompletionQueue ca = nodes.a().devices().get(0).createCompletionQueue(4 * PAIRS);
        CompletionQueue cb = nodes.b().devices().get(0).createCompletionQueue(4 * PAIRS);
        List<QueuePair> a = new ArrayList<>();
        List<QueuePair> b = new ArrayList<>();
        for (int i = 0; i < PAIRS; i++) {
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
            SoftTwoNodes.connectRc(qa, qb);
            a.add(qa);
            b.add(qb);
        }
        return new Pairs(a, b, ca, cb, pa, pb);
    }

    private static List<WorkCompletion> poll(CompletionQueue cq) {
        List<WorkCompletion> got = new ArrayList<>();
        cq.poll(64, wc -> got.add(wc.copy()));
        return got;
    }

    @Test
    void idleQueuePairsAreNotVisitedAndAPostedOneIsTransmittedInTheNextPass() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            Pairs p = connect(nodes);
            for (int i = 0; i < 5; i++) {
                nodes.progress();
            }
            SoftDevice da = nodes.a().softDevice(0);
            SoftDevice db = nodes.b().softDevice(0);
            assertEquals(0, da.activeQueuePairs().count(), "idle QPs in the active list");
            assertEquals(0, db.activeQueuePairs().count(), "idle QPs in the active list");
            MemoryRegion src = p.pa().allocateMemory(64, Access.LOCAL_WRITE);
            MemoryRegion dst = p.pb().allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            src.buffer().putLong(0, 0x5eed_cafeL);
            assertTrue(p.a().get(57).postSend(new SendWorkRequest().opcode(WrOpcode.RDMA_WRITE).wrId(57).sge(src, 0, 64)
                .remoteAddress(dst.address()).rkey(dst.rkey()).signaled(true)));
            nodes.progress();
            assertEquals(1, da.activeQueuePairs().count(), "the posted QP only, while its write is unacknowledged");
            List<WorkCompletion> done = new ArrayList<>();
            for (int i = 0; i < 4 && done.isEmpty(); i++) {
                nodes.progress();
                done.addAll(poll(p.ca()));
            }
            assertEquals(1, done.size(), "the write completes within a few passes: " + done);
            assertEquals(WcStatus.SUCCESS, done.get(0).status());
            assertEquals(57L, done.get(0).wrId());
            assertEquals(0x5eed_cafeL, dst.buffer().getLong(0));
            nodes.progress();
            assertEquals(0, da.activeQueuePairs().count(), "quiescent again");
            src.close();
            dst.close();
            close(p);
        }
    }

    @Test
    void aQueuePairMovedToErrorFlushesItsReceivesInTheNextPass() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            Pairs p = connect(nodes);
            MemoryRegion buf = p.pb().allocateMemory(128, Access.LOCAL_WRITE);
            QueuePair q = p.b().get(33);
            assertTrue(q.postReceive(new ReceiveWorkRequest().wrId(1).sge(buf, 0, 64)));
            assertTrue(q.postReceive(new ReceiveWorkRequest().wrId(2).sge(buf, 64, 64)));
            for (int i = 0; i < 5; i++) {
                nodes.progress();
            }
            assertEquals(0, nodes.b().softDevice(0).activeQueuePairs().count());
            q.toError();
            nodes.progress();
            List<WorkCompletion> flushed = poll(p.cb());
            assertEquals(2, flushed.size(), "both receives flushed by the first pass: " + flushed);
            flushed.forEach(wc -> assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(), wc::toString));
            buf.close();
            close(p);
        }
    }

    private static void close(Pairs p) {
        p.a().forEach(QueuePair::close);
        p.b().forEach(QueuePair::close);
        p.ca().close();
        p.cb().close();
        p.pa().close();
        p.pb().close();
    }
}
