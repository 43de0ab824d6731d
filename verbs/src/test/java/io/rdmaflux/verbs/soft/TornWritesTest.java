package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** RDMA WRITE placement: the last word last by default; torn on a rail that says so, as a poller would see it. */
class TornWritesTest {
    private static final int LENGTH = 64;

    /** Writes 64 bytes of 0x7E into b's zeroed region; returns the target after one engine pass of each side, and after all. */
    private static byte[][] write(RailConfig rail) {
        try (SoftTwoNodes nodes = SoftTwoNodes.create(1, rail)) {
            ProtectionDomain pa = nodes.a().devices().get(0).allocateProtectionDomain();
            ProtectionDomain pb = nodes.b().devices().get(0).allocateProtectionDomain();
            CompletionQueue ca = nodes.a().devices().get(0).createCompletionQueue(16);
            CompletionQueue cb = nodes.b().devices().get(0).createCompletionQueue(16);
            QueuePair[] qp = SoftTwoNodes.connectRc(pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).build()),
                pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build()));
            MemoryRegion src = pa.allocateMemory(LENGTH, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.allocateMemory(LENGTH, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            ByteBuffer s = src.buffer();
            for (int i = 0; i < LENGTH; i++) {
                s.put(i, (byte) 0x7E);
            }
            qp[0].postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_WRITE).signaled(true).sge(src, 0, LENGTH)
                .remoteAddress(dst.address()).rkey(dst.rkey()));
            long now = nodes.clock().nanoTime();
            nodes.a().progress(now);
            nodes.b().progress(now);
            byte[] between = new byte[LENGTH];
            dst.buffer().get(0, between);
            nodes.awaitCompletions(ca, 1);
            byte[] after = new byte[LENGTH];
            dst.buffer().get(0, after);
            return new byte[][] {between, after};
        }
    }

    @Test
    void aWriteIsPlacedWholeAndItsPortOrdersTheLastWord() {
        byte[][] r = write(RailConfig.UNSHAPED);
        for (int i = 0; i < LENGTH; i++) {
            assertEquals(0x7E, r[0][i], "byte " + i + " placed in the responder's pass");
        }
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            assertTrue(nodes.b().devices().get(0).port(1).orderedWritePlacement());
            assertTrue(nodes.b().devices().get(0).capabilities().orderedWritePlacement());
        }
    }

    @Test
    void aTornRailPlacesBothEndsFirstAndTheMiddleOnTheNextPass() {
        byte[][] r = write(RailConfig.builder().tornWrites(true).build());
        assertEquals(0x7E, r[0][0], "the head is there");
        assertEquals(0x7E, r[0][LENGTH - 1], "the tail is there");
        assertEquals(0, r[0][LENGTH / 4], "the second quarter is not yet");
        assertEquals(0, r[0][LENGTH / 2 - 1]);
        for (int i = 0; i < LENGTH; i++) {
            assertEquals(0x7E, r[1][i], "byte " + i + " placed by the next pass");
        }
        try (SoftTwoNodes nodes = SoftTwoNodes.create(1, RailConfig.builder().tornWrites(true).build())) {
            assertFalse(nodes.b().devices().get(0).port(1).orderedWritePlacement(), "a torn rail does not order the last word");
        }
    }
}
