package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * RDMA WRITE as {@code ucp_put} ({@link UcxPutPath}, {@link UcxRegionExports}): the put path is taken
 * (its counter moves, so a silent fall-back to frames fails these tests), places the bytes, orders a
 * later SEND after the data, carries WRITE_WITH_IMM, and a deregistered region's rkey is revoked: a
 * WRITE with it completes REM_ACCESS_ERR without a put.
 */
@ExtendWith(UcxTestSupport.Checks.class)
class UcxPutPathTest {
    private static final int SIZE = 64 * 1024;

    /** Two connected RC QPs, A writing into B's region {@code dst}. */
    private static final class Pair extends UcxTestSupport.UcxPair {
        final MemoryRegion src;
        final MemoryRegion dst;
        final MemoryRegion rx;

        /** Two INVOKER providers over {@code tls} with the put path on (over {@code tcp} alone it is off by default). */
        Pair(String tls) {
            this(tls, UcxProvider.Put.ON);
        }

        Pair(String tls, UcxProvider.Put put) {
            super(tls, b -> b.put(put));
            src = pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
            dst = pb.allocateMemory(SIZE, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            rx = pb.allocateMemory(64, Access.LOCAL_WRITE);
        }

        long[] putsA() {
            return hostA().putCounts(0);
        }

        long[] putsB() {
            return hostB().putCounts(0);
        }

        void fill(int seed) {
            for (int i = 0; i < SIZE; i++) {
                src.buffer().put(i, (byte) (i * 31 + seed));
            }
        }

        void assertPlaced(int seed) {
            byte[] want = new byte[SIZE];
            for (int i = 0; i < SIZE; i++) {
                want[i] = (byte) (i * 31 + seed);
            }
            byte[] got = new byte[SIZE];
            dst.buffer().get(0, got);
            assertArrayEquals(want, got, "the WRITE's bytes at the responder");
        }

        SendWorkRequest write(long wrId) {
            return new SendWorkRequest().wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, SIZE).remoteAddress(dst.address()).rkey(dst.rkey());
        }

        /** A first WRITE (as frames: it asks for the rkey) completes, and the rkey arrives. */
        void warmUp() {
            fill(1);
            assertTrue(qa.postSend(write(100)));
            WorkCompletion wc = next(ca);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
            assertPlaced(1);
            assertEquals(0, putsA()[0], "the first WRITE with an rkey goes as frames");
            drive(() -> putsA()[3] == 1, "the rkey reply");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sm,self", "tcp"})
    void aWriteGoesAsAPutAndASendPostedAfterItArrivesAfterTheData(String tls) {
        try (Pair p = new Pair(tls)) {
            p.warmUp();
            for (int round = 2; round < 6; round++) {
                p.fill(round);
                assertTrue(p.qb.postReceive(new ReceiveWorkRequest().wrId(round).sge(p.rx, 0, 64)));
                assertTrue(p.qa.postSend(p.write(round).signaled(false)));
                assertTrue(p.qa.postSend(new SendWorkRequest().wrId(1000 + round).sge(p.src, 0, 8)));
                WorkCompletion recv = p.next(p.cb);
                // checked the moment the SEND's receive completes: the WRITE's data must already be there
                assertEquals(WcStatus.SUCCESS, recv.status(), recv::toString);
                p.assertPlaced(round);
                WorkCompletion sent = p.next(p.ca);
                assertEquals(1000 + round, sent.wrId(), sent::toString);
                assertEquals(WcStatus.SUCCESS, sent.status(), sent::toString);
                assertEquals(round - 1, p.putsA()[0], "WRITE " + round + " went as ucp_put");
            }
            assertEquals(4L * SIZE, p.putsA()[1]);
            assertEquals(1, p.putsB()[4], "B mapped its region once");
        }
    }

    /**
     * Over {@code tcp} UCX carries a put as messages the target's worker must progress, so while only A
     * runs, the put cannot complete: the WRITE's header (and the SEND behind it) must stay held at A, not
     * go out beside the unfinished put. Sending the header at once instead of after the flush fails here.
     */
    @org.junit.jupiter.api.Test
    void aWritesHeaderAndTheFramesBehindItWaitForTheFlushOfItsPuts() {
        try (Pair p = new Pair("tcp")) {
            p.warmUp();
            p.fill(5);
            assertTrue(p.qb.postReceive(new ReceiveWorkRequest().wrId(5).sge(p.rx, 0, 64)));
            long sentBefore = p.hostA().frameCounts(0)[0];
            assertTrue(p.qa.postSend(p.write(5).signaled(false)));
            assertTrue(p.qa.postSend(new SendWorkRequest().wrId(55).sge(p.src, 0, 8)));
            for (int i = 0; i < 2000; i++) {
                p.hostA().progress(System.nanoTime());
            }
            assertEquals(1, p.putsA()[0], "the WRITE went as ucp_put");
            assertEquals(sentBefore, p.hostA().frameCounts(0)[0], "no frame left A before its put completed at B");
            WorkCompletion recv = p.next(p.cb);
            assertEquals(WcStatus.SUCCESS, recv.status(), recv::toString);
            p.assertPlaced(5);
            assertEquals(55, p.next(p.ca).wrId());
        }
    }

    @org.junit.jupiter.api.Test
    void thePutOptionTurnsThePathOffAndAutoLeavesItOffOverTcpAlone() {
        assertTrue(UcxProvider.putEnabled(UcxProvider.Put.AUTO, null));
        assertTrue(UcxProvider.putEnabled(UcxProvider.Put.AUTO, "sm,self"));
        assertTrue(UcxProvider.putEnabled(UcxProvider.Put.AUTO, "tcp,rc"));
        assertEquals(false, UcxProvider.putEnabled(UcxProvider.Put.AUTO, "tcp"));
        assertTrue(UcxProvider.putEnabled(UcxProvider.Put.ON, "tcp"));
        assertEquals(false, UcxProvider.putEnabled(UcxProvider.Put.OFF, "sm,self"));
        try (Pair p = new Pair("sm,self", UcxProvider.Put.OFF)) {
            assertEquals(false, p.hostA().putPathEnabled(0));
            for (int round = 1; round < 4; round++) {
                p.fill(round);
                assertTrue(p.qa.postSend(p.write(round)));
                assertEquals(WcStatus.SUCCESS, p.next(p.ca).status());
                p.assertPlaced(round);
            }
            assertEquals(0, p.putsA()[0], "put=off: WRITEs as frames");
            assertEquals(0, p.putsA()[2], "put=off: no rkey asked for");
        }
        try (io.rdmaflux.verbs.RdmaProvider tcp = io.rdmaflux.verbs.RdmaProviders.open("ucx", java.util.Map.of("tls", "tcp", "threading", "invoker"));
             io.rdmaflux.verbs.RdmaProvider on = io.rdmaflux.verbs.RdmaProviders.open("ucx",
                 java.util.Map.of("tls", "tcp", "threading", "invoker", "put", "on"))) {
            assertEquals(false, ((UcxProvider) tcp).putPathEnabled(0), "auto over tcp alone: off");
            assertTrue(((UcxProvider) on).putPathEnabled(0));
        }
        io.rdmaflux.verbs.VerbsException bad = org.junit.jupiter.api.Assertions.assertThrows(io.rdmaflux.verbs.VerbsException.class,
            () -> io.rdmaflux.verbs.RdmaProviders.open("ucx", java.util.Map.of("put", "maybe")));
        assertTrue(bad.getMessage().contains("put='maybe'") && bad.getMessage().contains("auto"), bad.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"sm,self", "tcp"})
    void writeWithImmediateGoesAsAPutAndCompletesTheReceiveWithTheImmediate(String tls) {
        try (Pair p = new Pair(tls)) {
            p.warmUp();
            p.fill(7);
            assertTrue(p.qb.postReceive(new ReceiveWorkRequest().wrId(77).sge(p.rx, 0, 64)));
            assertTrue(p.qa.postSend(p.write(7).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immediate(0x1234_5678)));
            WorkCompletion recv = p.next(p.cb);
            assertEquals(WcStatus.SUCCESS, recv.status(), recv::toString);
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, recv.opcode());
            assertEquals(0x1234_5678, recv.immediate());
            p.assertPlaced(7);
            assertEquals(WcStatus.SUCCESS, p.next(p.ca).status());
            assertEquals(1, p.putsA()[0], "the WRITE_WITH_IMM went as ucp_put");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sm,self", "tcp"})
    void aDeregisteredRegionsRkeyIsRevokedAndAWriteWithItFailsRemoteAccessWithoutAPut(String tls) {
        try (Pair p = new Pair(tls)) {
            p.warmUp();
            p.fill(3);
            assertTrue(p.qa.postSend(p.write(3)));
            assertEquals(WcStatus.SUCCESS, p.next(p.ca).status());
            p.assertPlaced(3);
            assertEquals(1, p.putsA()[0]);
            int staleRkey = p.dst.rkey();
            long staleAddress = p.dst.address();
            p.dst.deregister();
            // B revokes; A acknowledges after its puts completed; B then unmaps the region
            p.drive(() -> p.putsB()[6] == 1 && p.putsB()[5] == 0, "the revocation and its acknowledgement");
            assertTrue(p.qa.postSend(new SendWorkRequest().wrId(9).opcode(WrOpcode.RDMA_WRITE).sge(p.src, 0, SIZE)
                .remoteAddress(staleAddress).rkey(staleRkey)));
            WorkCompletion wc = p.next(p.ca);
            assertNotNull(wc);
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
            assertEquals(1, p.putsA()[0], "a revoked rkey never takes the put path");
        }
    }
}
