package io.rdmaflux.verbs.soft;

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
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Posting is thread-safe: two threads post on one QP while the provider's own thread runs the NICs. */
@ExtendWith(NoLeaksExtension.class)
class SoftConcurrentPostingTest {
    private static final int PER_THREAD = 5_000;

    @Test
    void twoThreadsPostingOnOneQpLoseNothingAndKeepTheirOwnOrder() throws Exception {
        try (SoftProvider p = SoftProvider.builder().name("concurrent").fabric(SoftFabric.mem("concurrent")).devices(2).build()) {
            Device da = p.devices().get(0);
            Device db = p.devices().get(1);
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue ca = da.createCompletionQueue(4 * PER_THREAD);
            CompletionQueue cb = db.createCompletionQueue(4 * PER_THREAD);
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).maxSendWr(64).build());
            QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb)
                .maxReceiveWr(2 * PER_THREAD).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            MemoryRegion src = pa.allocateMemory(8 * 2, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.allocateMemory(8L * 2 * PER_THREAD, Access.LOCAL_WRITE);
            for (int i = 0; i < 2 * PER_THREAD; i++) {
                assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(i).sge(dst, 8L * i, 8)));
            }
            List<Thread> posters = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int id = t;
                Thread th = new Thread(() -> {
                    SendWorkRequest wr = new SendWorkRequest();
                    for (int i = 0; i < PER_THREAD; i++) {
                        wr.wrId((long) id << 32 | i).sge(src, 8L * id, 8).immediate(id << 24 | i)
                            .opcode(io.rdmaflux.verbs.WrOpcode.SEND_WITH_IMM);
                        while (!qa.postSend(wr)) {
                            Thread.onSpinWait();
                        }
                    }
                }, "test-poster-" + t);
                posters.add(th);
                th.start();
            }
            List<Integer> immediates = new ArrayList<>();
            int[] sends = {0};
            long deadline = System.nanoTime() + 60_000_000_000L;
            while ((immediates.size() < 2 * PER_THREAD || sends[0] < 2 * PER_THREAD) && System.nanoTime() < deadline) {
                cb.poll(256, wc -> {
                    assertTrue(wc.isSuccess(), wc::toString);
                    immediates.add(wc.immediate());
                });
                ca.poll(256, wc -> {
                    assertTrue(wc.isSuccess(), wc::toString);
                    sends[0]++;
                });
                Thread.onSpinWait();
            }
            for (Thread th : posters) {
                th.join(10_000);
            }
            assertEquals(2 * PER_THREAD, immediates.size());
            assertEquals(2 * PER_THREAD, sends[0]);
            int[] next = new int[2];
            for (int imm : immediates) {
                int thread = imm >>> 24;
                assertEquals(next[thread]++, imm & 0xFFFFFF, "thread " + thread + "'s messages arrive in its posting order");
            }
        }
    }
}
