package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * RDMA READ as {@code ucp_get} (the same rkey exchange as the put path): after the exchange a READ's data
 * is fetched by the requester (the {@code putCounts} get counter moves, so a silent fall-back to the
 * responder's data frames fails these tests), byte for byte; a READ right after a WRITE of the same QP
 * sees the WRITE's bytes; and once the region is deregistered (its rkey revoked) a READ with the old rkey
 * completes REM_ACCESS_ERR without a get and leaves the local buffer untouched.
 */
class UcxGetPathTest {
    private static final int SIZE = 64 * 1024;
    private static final int PASSES = 2_000_000;

    private VerbsLeakCheck leaks;

    @BeforeEach
    void begin() {
        UcxTestSupport.assumeUcx();
        leaks = VerbsLeakCheck.begin();
    }

    @AfterEach
    void end() {
        if (leaks != null) {
            leaks.assertClean();
        }
    }

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
        try (UcxFixture fx = new UcxFixture(tls, UcxProvider.Put.ON)) {
            Device da = fx.deviceA();
            Device db = fx.deviceB();
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue ca = da.createCompletionQueue(64);
            CompletionQueue cb = db.createCompletionQueue(64);
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).build());
            QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            MemoryRegion local = pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
            MemoryRegion src = pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
            MemoryRegion remote = pb.allocateMemory(SIZE, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            long[] id = {0};
            Runnable read = () -> assertTrue(qa.postSend(new SendWorkRequest().wrId(++id[0]).opcode(WrOpcode.RDMA_READ)
                .sge(local, 0, SIZE).remoteAddress(remote.address()).rkey(remote.rkey())));
            java.util.function.Supplier<WorkCompletion> next = () -> {
                List<WorkCompletion> got = new ArrayList<>();
                until(fx, () -> {
                    ca.poll(1, wc -> got.add(wc.copy()));
                    return !got.isEmpty();
                }, "a completion at A");
                return got.get(0);
            };
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
            assertEquals(0, fx.hostA().putCounts(0)[7], "the first READ with an rkey goes as frames");
            until(fx, () -> fx.hostA().putCounts(0)[3] == 1, "the rkey reply");

            for (int round = 2; round < 5; round++) {
                remote.buffer().put(0, pattern(round));
                read.run();
                WorkCompletion wc = next.get();
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                assertArrayEquals(pattern(round), localBytes.get(), "READ " + round + " byte for byte");
                assertEquals(round - 1, fx.hostA().putCounts(0)[7], "READ " + round + " went as ucp_get");
            }
            assertEquals(3L * SIZE, fx.hostA().putCounts(0)[8]);

            // a READ of 4 KiB or less stays frames (its response fits the frame's own buffer)
            remote.buffer().put(0, pattern(5));
            assertTrue(qa.postSend(new SendWorkRequest().wrId(500).opcode(WrOpcode.RDMA_READ).sge(local, 0, 4096)
                .remoteAddress(remote.address()).rkey(remote.rkey())));
            assertEquals(WcStatus.SUCCESS, next.get().status());
            assertArrayEquals(java.util.Arrays.copyOf(pattern(5), 4096), java.util.Arrays.copyOf(localBytes.get(), 4096));
            assertEquals(3, fx.hostA().putCounts(0)[7], "a 4 KiB READ went as frames");

            // a WRITE then a READ of the same bytes on one QP: the READ sees the WRITE
            src.buffer().put(0, pattern(9));
            assertTrue(qa.postSend(new SendWorkRequest().wrId(900).opcode(WrOpcode.RDMA_WRITE).signaled(false)
                .sge(src, 0, SIZE).remoteAddress(remote.address()).rkey(remote.rkey())));
            read.run();
            WorkCompletion wc = next.get();
            assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
            assertArrayEquals(pattern(9), localBytes.get(), "the READ saw the WRITE posted before it");
            assertEquals(4, fx.hostA().putCounts(0)[7]);

            // deregistered: revoked, then a READ with the old rkey fails without a get
            int staleRkey = remote.rkey();
            long staleAddress = remote.address();
            remote.deregister();
            until(fx, () -> fx.hostB().putCounts(0)[6] == 1 && fx.hostB().putCounts(0)[5] == 0, "the revocation");
            local.buffer().put(0, new byte[SIZE]);
            assertTrue(qa.postSend(new SendWorkRequest().wrId(999).opcode(WrOpcode.RDMA_READ).sge(local, 0, SIZE)
                .remoteAddress(staleAddress).rkey(staleRkey)));
            WorkCompletion bad = next.get();
            assertEquals(WcStatus.REM_ACCESS_ERR, bad.status(), bad::toString);
            assertEquals(4, fx.hostA().putCounts(0)[7], "a revoked rkey never takes the get path");
            assertArrayEquals(new byte[SIZE], localBytes.get(), "the local buffer was not written");
        }
    }

    private static void until(UcxFixture fx, BooleanSupplier done, String what) {
        for (int i = 0; i < PASSES; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            fx.progress();
        }
        throw new AssertionError("gave up waiting for " + what);
    }
}
