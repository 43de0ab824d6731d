package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.ucx.UcxTestSupport.UcxPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * RDMA READ as {@code ucp_get} (the same rkey exchange as the put path): after the exchange a READ's data
 * is fetched by the requester (the {@code putCounts} get counter moves, so a silent fall-back to the
 * responder's data frames fails these tests), byte for byte; a READ right after a WRITE of the same QP
 * sees the WRITE's bytes; and once the region is deregistered (its rkey revoked) a READ with the old rkey
 * completes REM_ACCESS_ERR without a get and leaves the local buffer untouched.
 */
@ExtendWith(UcxTestSupport.Checks.class)
class UcxGetPathTest {
    private static final int SIZE = 64 * 1024;

    private static byte[] pattern(int seed) {
        byte[] b = new byte[SIZE];
        for (int i = 0; i < SIZE; i++) {
            b[i] = (byte) (i * 17 + seed * 5 + (i >> 9));
        }
        return b;
    }

    @ParameterizedTest
    @ValueSource(strings = {"sm,self", "tcp"})
    void aReadAfterTheRkeyExchangeIsAGetByteForByteOrderedAfterAWriteAndFailsOnARevokedRkey(String tls) {
        try (UcxPair p = UcxPair.open(tls, b -> b.put(UcxProvider.Put.ON))) {
            MemoryRegion local = p.pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
            MemoryRegion src = p.pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
            MemoryRegion remote = p.pb.allocateMemory(SIZE, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            long[] id = {0};
            Runnable read = () -> assertTrue(p.qa.postSend(new SendWorkRequest().wrId(++id[0]).opcode(WrOpcode.RDMA_READ)
                .sge(local, 0, SIZE).remoteAddress(remote.address()).rkey(remote.rkey())));
            java.util.function.Supplier<WorkCompletion> next = () -> p.next(p.ca);
            java.util.function.Supplier<byte[]> localBytes = () -> {
                byte[] b = new byte[SIZE];
                local.buffer().get(0, b);
                return b;
            };

            // the first READ with the rkey goes as frames and asks for the key
            remote.buffer().put(0, pattern(1));
            read.run();
            assertEquals(WcStatus.SUCCESS, next.get().status());
            assertArrayEquals(pattern(1), localBytes.get());
            assertEquals(0, p.hostA().putCounts(0)[7], "the first READ with an rkey goes as frames");
            p.drive(() -> p.hostA().putCounts(0)[3] == 1, "the rkey reply");

            for (int round = 2; round < 5; round++) {
                remote.buffer().put(0, pattern(round));
                read.run();
                WorkCompletion wc = next.get();
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                assertArrayEquals(pattern(round), localBytes.get(), "READ " + round + " byte for byte");
                assertEquals(round - 1, p.hostA().putCounts(0)[7], "READ " + round + " went as ucp_get");
            }
            assertEquals(3L * SIZE, p.hostA().putCounts(0)[8]);

            // a READ of 4 KiB or less stays frames (its response fits the frame's own buffer)
            remote.buffer().put(0, pattern(5));
            assertTrue(p.qa.postSend(new SendWorkRequest().wrId(500).opcode(WrOpcode.RDMA_READ).sge(local, 0, 4096)
                .remoteAddress(remote.address()).rkey(remote.rkey())));
            assertEquals(WcStatus.SUCCESS, next.get().status());
            assertArrayEquals(java.util.Arrays.copyOf(pattern(5), 4096), java.util.Arrays.copyOf(localBytes.get(), 4096));
            assertEquals(3, p.hostA().putCounts(0)[7], "a 4 KiB READ went as frames");

            // a WRITE then a READ of the same bytes on one QP: the READ sees the WRITE
            src.buffer().put(0, pattern(9));
            assertTrue(p.qa.postSend(new SendWorkRequest().wrId(900).opcode(WrOpcode.RDMA_WRITE).signaled(false)
                .sge(src, 0, SIZE).remoteAddress(remote.address()).rkey(remote.rkey())));
            read.run();
            WorkCompletion wc = next.get();
            assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
            assertArrayEquals(pattern(9), localBytes.get(), "the READ saw the WRITE posted before it");
            assertEquals(4, p.hostA().putCounts(0)[7]);

            // deregistered: revoked, then a READ with the old rkey fails without a get
            int staleRkey = remote.rkey();
            long staleAddress = remote.address();
            remote.deregister();
            p.drive(() -> p.hostB().putCounts(0)[6] == 1 && p.hostB().putCounts(0)[5] == 0, "the revocation");
            local.buffer().put(0, new byte[SIZE]);
            assertTrue(p.qa.postSend(new SendWorkRequest().wrId(999).opcode(WrOpcode.RDMA_READ).sge(local, 0, SIZE)
                .remoteAddress(staleAddress).rkey(staleRkey)));
            WorkCompletion bad = next.get();
            assertEquals(WcStatus.REM_ACCESS_ERR, bad.status(), bad::toString);
            assertEquals(4, p.hostA().putCounts(0)[7], "a revoked rkey never takes the get path");
            assertArrayEquals(new byte[SIZE], localBytes.get(), "the local buffer was not written");
        }
    }

    /**
     * {@code put=auto} (the default) over {@code tcp} alone keeps READs on frames: there {@code ucp_get}
     * measured 0.50-1.12x the frames at 64 KiB and 0.84-1.03x at 1 MiB (README), so no rkey is asked for
     * and no get is made, whatever the size.
     */
    @Test
    void overTcpAloneTheDefaultReadsAsFramesAndNeverAsksForAnRkey() {
        try (UcxPair p = UcxPair.open("tcp")) {
            MemoryRegion local = p.pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
            MemoryRegion remote = p.pb.allocateMemory(SIZE, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            for (int round = 1; round < 4; round++) {
                remote.buffer().put(0, pattern(round));
                assertTrue(p.qa.postSend(new SendWorkRequest().wrId(round).opcode(WrOpcode.RDMA_READ)
                    .sge(local, 0, SIZE).remoteAddress(remote.address()).rkey(remote.rkey())));
                WorkCompletion wc = p.next(p.ca);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                byte[] got = new byte[SIZE];
                local.buffer().get(0, got);
                assertArrayEquals(pattern(round), got, "READ " + round + " byte for byte");
            }
            p.drive(1_000);
            assertEquals(0, p.hostA().putCounts(0)[2], "no rkey request over tcp alone");
            assertEquals(0, p.hostA().putCounts(0)[7], "no READ went as ucp_get");
            assertEquals(0, p.hostB().putCounts(0)[4], "no region mapped for a peer");
        }
    }
}
