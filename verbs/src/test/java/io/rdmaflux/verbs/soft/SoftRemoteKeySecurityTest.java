package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An rkey names one region for its lifetime, on one device, in one protection domain: a stale rkey
 * (its region deregistered, the slot reused, even hundreds of times) or one from another protection
 * domain cannot read or write; a third host that forges frames of a connection it is not part of is
 * not heard. Each refusal is counted.
 */
@ExtendWith(NoLeaksExtension.class)
class SoftRemoteKeySecurityTest {
    private static SendWorkRequest write(MemoryRegion src, long remoteAddress, int rkey) {
        return new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, 64).remoteAddress(remoteAddress).rkey(rkey);
    }

    @Test
    void aStaleRkeyNeverNamesALaterRegionEvenAfterItsSlotWasReusedManyTimes() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            SoftDevice db = nodes.b().softDevice(0);
            ProtectionDomain pb = db.allocateProtectionDomain();
            MemoryRegion first = pb.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            int staleRkey = first.rkey();
            long staleAddress = first.address();
            first.close();
            Set<Integer> seen = new HashSet<>();
            seen.add(staleRkey);
            // one slot reused over and over: before the fix the 128th registration got the first one's key back
            for (int i = 0; i < 300; i++) {
                MemoryRegion mr = pb.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
                assertTrue(seen.add(mr.rkey()), "registration " + i + " got a key handed out before: 0x" + Integer.toHexString(mr.rkey()));
                mr.close();
            }
            assertTrue(db.memoryKeySlotsRetired() >= 2, "slots retired: " + db.memoryKeySlotsRetired());

            // the peer still holds the stale rkey: a WRITE with it is refused, whatever lives there now
            MemoryRegion now = pb.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            SoftDevice da = nodes.a().softDevice(0);
            ProtectionDomain pa = da.allocateProtectionDomain();
            CompletionQueue ca = da.createCompletionQueue(16);
            CompletionQueue cb = db.createCompletionQueue(16);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
            SoftTwoNodes.connectRc(qa, qb);
            MemoryRegion src = pa.allocateMemory(64, Access.LOCAL_WRITE);
            src.buffer().put(0, new byte[] {1, 2, 3, 4});
            long refusedBefore = db.remoteAccessRefused();
            assertTrue(qa.postSend(write(src, staleAddress, staleRkey)));
            WorkCompletion wc = nodes.awaitCompletions(ca, 1).get(0);
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
            assertEquals(refusedBefore + 1, db.remoteAccessRefused());
            assertArrayEquals(new byte[64], bytes(now), "the region that lives in the slot now is untouched");
        }
    }

    @Test
    void anRkeyOfAnotherProtectionDomainIsRefused() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            SoftDevice da = nodes.a().softDevice(0);
            SoftDevice db = nodes.b().softDevice(0);
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            ProtectionDomain other = db.allocateProtectionDomain();
            MemoryRegion foreign = other.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            CompletionQueue ca = da.createCompletionQueue(16);
            CompletionQueue cb = db.createCompletionQueue(16);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
            SoftTwoNodes.connectRc(qa, qb);
            MemoryRegion src = pa.allocateMemory(64, Access.LOCAL_WRITE);
            src.buffer().put(0, new byte[] {9, 9, 9});
            assertTrue(qa.postSend(write(src, foreign.address(), foreign.rkey())));
            WorkCompletion wc = nodes.awaitCompletions(ca, 1).get(0);
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
            assertEquals(1, db.remoteAccessRefused());
            assertArrayEquals(new byte[64], bytes(foreign));
        }
    }

    @Test
    void aThirdHostForgingTheFramesOfAConnectionIsNotHeard() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create();
             SoftProvider mallory = SoftProvider.builder().name("mallory").fabric(nodes.fabric()).clock(nodes.clock())
                 .threadingMode(ThreadingMode.INVOKER).build()) {
            SoftDevice da = nodes.a().softDevice(0);
            SoftDevice db = nodes.b().softDevice(0);
            SoftDevice dm = mallory.softDevice(0);
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            ProtectionDomain pm = dm.allocateProtectionDomain();
            CompletionQueue ca = da.createCompletionQueue(16);
            CompletionQueue cb = db.createCompletionQueue(16);
            CompletionQueue cm = dm.createCompletionQueue(16);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
            SoftTwoNodes.connectRc(qa, qb);
            MemoryRegion target = pb.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            // mallory's QP has a's QPN (the first on each device) and aims at b's QP: b's responder saw a's QPN only
            QueuePair qm = pm.createQueuePair(SoftTwoNodes.rc(mallory, cm).retryTimeoutNs(10_000).retryCount(1).build());
            assertEquals(qa.qpNumber(), qm.qpNumber());
            qm.connect(qb.localEndpoint());
            MemoryRegion evil = pm.allocateMemory(64, Access.LOCAL_WRITE);
            evil.buffer().put(0, new byte[] {6, 6, 6});
            assertTrue(qm.postSend(write(evil, target.address(), target.rkey())));
            nodes.runUntil(() -> {
                mallory.progress(nodes.clock().nanoTime());
                return cm.poll(1, w -> { }) > 0;
            }, 1_000, 1_000_000);
            assertTrue(db.rcForeignFramesDropped() >= 1, "counted: " + db.rcForeignFramesDropped());
            assertArrayEquals(new byte[64], bytes(target));
            assertEquals(0, ca.poll(4, w -> { }), "nothing reached a: no NAK or ACK was provoked");

            // the real connection is unharmed
            MemoryRegion src = pa.allocateMemory(64, Access.LOCAL_WRITE);
            src.buffer().put(0, new byte[] {1, 2, 3});
            assertTrue(qa.postSend(write(src, target.address(), target.rkey())));
            List<WorkCompletion> done = nodes.awaitCompletions(ca, 1);
            assertEquals(WcStatus.SUCCESS, done.get(0).status(), done.get(0)::toString);
            assertEquals(1, bytes(target)[0]);
            QpEndpoint ignored = qa.localEndpoint();
            assertTrue(ignored.qpn() > 0);
        }
    }

    private static byte[] bytes(MemoryRegion mr) {
        byte[] out = new byte[64];
        mr.buffer().get(0, out);
        return out;
    }
}
