package io.rdmaflux.verbs.soft.net;

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
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.soft.RailConfig;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Atomic replay on the IP fabric: TCP never loses or duplicates a frame, but the RC requester above it
 * retransmits on its own (ACK timeout, PSN sequence NAK), and the rail's injected RC faults apply before
 * the TCP stream; here every frame is duplicated with probability 0.3 in both directions, so duplicate
 * atomic requests cross the TCP stream and must be answered from the responder's saved results. One
 * requester adds 1 {@value #N} times: the old values must be 0..N-1 in order and the word N.
 */
class NetAtomicReplayTest {
    static final int N = 300;

    @Test
    void duplicateAtomicRequestsOverTcpAreAnsweredFromTheSavedResults() {
        try (NetLoopbackFixture fx = new NetLoopbackFixture()) {
            RailConfig dup = RailConfig.builder().rcDuplicateRate(0.3).rcFaultSeed(31).build();
            fx.setRail(fx.deviceA().port(1), dup);
            fx.setRail(fx.deviceB().port(1), dup);
            Device da = fx.deviceA();
            Device db = fx.deviceB();
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue ca = da.createCompletionQueue(1024);
            CompletionQueue cb = db.createCompletionQueue(1024);
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).build());
            QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            MemoryRegion results = pa.allocateMemory(8L * N, Access.LOCAL_WRITE);
            MemoryRegion counter = pb.allocateMemory(8, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC);
            SendWorkRequest wr = new SendWorkRequest();
            List<String> failures = new ArrayList<>();
            int posted = 0;
            int completed = 0;
            for (int pass = 0; completed < N && failures.isEmpty(); pass++) {
                assertTrue(pass < 2_000_000, "stuck after " + completed + " of " + N);
                while (posted < N && qa.postSend(wr.reset().wrId(posted).fetchAndAdd(counter.address(), counter.rkey(), 1, results,
                    8L * posted))) {
                    posted++;
                }
                int before = completed;
                int[] k = {completed};
                ca.poll(64, wc -> {
                    long old = results.buffer().order(ByteOrder.nativeOrder()).getLong(8 * k[0]);
                    if (wc.status() != WcStatus.SUCCESS || wc.wrId() != k[0] || old != k[0]) {
                        failures.add("completion " + k[0] + " (old " + old + "): " + wc);
                    }
                    k[0]++;
                });
                completed = k[0];
                if (fx.progress() == 0 && completed == before) {
                    fx.advanceNs(10_000);
                }
            }
            assertEquals(List.of(), failures);
            fx.advanceNs(20_000_000);
            fx.progress();
            assertEquals(N, counter.buffer().order(ByteOrder.nativeOrder()).getLong(0), "each atomic ran exactly once");
            assertTrue(fx.hostB().softDevice(0).rcAtomicReplays() > 0, "duplicates crossed TCP and were replayed");
        }
    }
}
