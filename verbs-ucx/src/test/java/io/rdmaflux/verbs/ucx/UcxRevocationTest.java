package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Deregistering a region whose UCX rkey went to a peer ({@link UcxRegionExports}) returns only once the
 * peer acknowledged the revocation (its puts with the key completed, and it puts with it no more), or
 * the peer is gone, or the revoke timeout took it for failed; so no put lands after deregistration
 * returned, as after {@code ibv_dereg_mr}. Host B exposes the region, host A writes; the test thread
 * drives both INVOKER providers (it is their engine thread), and a second thread deregisters, as an
 * application thread does. Each case fails when deregistration returns at once (the behaviour before).
 */
@ExtendWith(UcxTestSupport.Checks.class)
class UcxRevocationTest {
    private static final int SIZE = 64 * 1024;
    /** How long a deregistration that must wait is watched not returning, ms. */
    private static final long WATCH_MS = 300;

    /**
     * Two hosts with the put path on and the revoke timeout {@code revokeTimeoutMs}: A writes into B's
     * region {@code dst}, registered over a buffer the test keeps ({@link #target}).
     */
    private static final class Pair extends UcxTestSupport.UcxPair {
        final MemoryRegion src;
        final ByteBuffer target = ByteBuffer.allocateDirect(SIZE);
        final MemoryRegion dst;
        final MemoryRegion rx;

        Pair(String tls, long revokeTimeoutMs) {
            super(tls, b -> b.put(UcxProvider.Put.ON).revokeTimeoutMs(revokeTimeoutMs));
            src = pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
            dst = pb.registerMemory(target, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            rx = pb.allocateMemory(64, Access.LOCAL_WRITE);
        }

        long[] putsA() {
            return hostA().putCounts(0);
        }

        long[] putsB() {
            return hostB().putCounts(0);
        }

        long[] revocationsB() {
            return hostB().revocationCounts(0);
        }

        void fill(int seed) {
            for (int i = 0; i < SIZE; i++) {
                src.buffer().put(i, (byte) (i * 31 + seed));
            }
        }

        byte[] pattern(int seed) {
            byte[] want = new byte[SIZE];
            for (int i = 0; i < SIZE; i++) {
                want[i] = (byte) (i * 31 + seed);
            }
            return want;
        }

        byte[] targetBytes() {
            byte[] got = new byte[SIZE];
            target.get(0, got);
            return got;
        }

        SendWorkRequest write(long wrId) {
            return new SendWorkRequest().wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, SIZE).remoteAddress(dst.address()).rkey(dst.rkey());
        }

        /** Progresses B alone until {@code done}, for 20 s at most (real time: a revoke timeout must pass). */
        void untilB(BooleanSupplier done, String what) {
            long until = System.nanoTime() + 20_000_000_000L;
            while (System.nanoTime() - until < 0) {
                if (done.getAsBoolean()) {
                    return;
                }
                hostB().progress(System.nanoTime());
            }
            throw new AssertionError("gave up waiting (progressing B only) for " + what);
        }

        /** The first WRITE (frames, asks for the rkey), then one as a put: B has handed A the key. */
        void exportToA() {
            fill(1);
            assertTrue(qa.postSend(write(100)));
            assertEquals(WcStatus.SUCCESS, next(ca).status());
            drive(() -> putsA()[3] == 1, "the rkey reply");
            fill(2);
            assertTrue(qa.postSend(write(101)));
            assertEquals(WcStatus.SUCCESS, next(ca).status());
            assertEquals(1, putsA()[0], "the second WRITE went as ucp_put");
            assertArrayEquals(pattern(2), targetBytes());
        }

        /** Deregisters {@code dst} on a new thread (not the engine thread), as an application does. */
        Deregistration deregisterElsewhere() {
            Deregistration d = new Deregistration(dst);
            d.start();
            return d;
        }
    }

    private static final class Deregistration extends Thread {
        private final MemoryRegion region;
        volatile boolean returned;
        volatile long tookNs = -1;

        Deregistration(MemoryRegion region) {
            super("test-deregistration");
            this.region = region;
            setDaemon(true);
        }

        @Override
        public void run() {
            long t0 = System.nanoTime();
            region.deregister();
            tookNs = System.nanoTime() - t0;
            returned = true;
        }

        void joinNow() throws InterruptedException {
            join(10_000);
            assertFalse(isAlive(), "the deregistration thread ended");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sm,self", "tcp"})
    void deregistrationWaitsUntilThePeerAcknowledgedTheRevocation(String tls) throws InterruptedException {
        try (Pair p = new Pair(tls, 60_000)) {
            p.exportToA();
            Deregistration d = p.deregisterElsewhere();
            // B sends the REVOKE; A, not progressed, cannot acknowledge it
            p.untilB(() -> p.putsB()[6] == 1, "B's REVOKE");
            d.join(WATCH_MS);
            assertFalse(d.returned, "deregistration returned before the peer holding the rkey acknowledged its revocation");
            assertEquals(1, p.putsB()[5], "the region stays mapped until the acknowledgement");
            p.drive(() -> d.returned, "the deregistration to return once A acknowledged");
            d.joinNow();
            assertEquals(0, p.putsB()[5], "unmapped before deregistration returned");
            assertEquals(1, p.revocationsB()[0], "one deregistration waited");
            assertEquals(0, p.revocationsB()[2] + p.revocationsB()[3], "no wait expired, no peer timed out");
            // A's later WRITE with the old rkey: no put, REM_ACCESS_ERR, the memory untouched
            p.fill(3);
            byte[] before = p.targetBytes();
            assertTrue(p.qa.postSend(p.write(102)));
            WorkCompletion wc = p.next(p.ca);
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
            assertEquals(1, p.putsA()[0], "a revoked rkey never takes the put path");
            assertArrayEquals(before, p.targetBytes(), "the deregistered memory was not written");
        }
    }

    /**
     * Over {@code tcp} a put completes at B only when B's worker runs: A's put is under way when B's
     * application deregisters. Deregistration must not return until that put has landed (A acknowledges
     * the revocation only after its flush), so nothing lands after it returned; before the change it
     * returned at once and the put landed later, into memory the application had taken back.
     */
    @Test
    void aPutUnderWayWhenTheRegionIsDeregisteredLandsBeforeDeregistrationReturnsNeverAfter() throws InterruptedException {
        try (Pair p = new Pair("tcp", 60_000)) {
            p.exportToA();
            p.fill(9);
            assertTrue(p.qa.postSend(p.write(109)));
            for (int i = 0; i < 2000 && p.putsA()[0] < 2; i++) {
                p.hostA().progress(System.nanoTime());
            }
            assertEquals(2, p.putsA()[0], "A issued the put");
            Deregistration d = p.deregisterElsewhere();
            // B runs (the put lands, B sends the REVOKE); A, not progressed, cannot acknowledge
            long until = System.nanoTime() + WATCH_MS * 1_000_000L;
            while (System.nanoTime() - until < 0 && !d.returned) {
                p.hostB().progress(System.nanoTime());
            }
            assertFalse(d.returned, "deregistration returned while a put with the region's rkey was under way");
            p.drive(() -> d.returned, "the deregistration");
            d.joinNow();
            byte[] atReturn = p.targetBytes();
            assertArrayEquals(p.pattern(9), atReturn, "the put under way landed before deregistration returned");
            WorkCompletion wc = p.next(p.ca);
            assertNotEquals(WcStatus.SUCCESS, wc.status(), "the WRITE's header reached B after the deregistration: " + wc);
            p.drive(20_000);
            assertArrayEquals(atReturn, p.targetBytes(), "nothing landed after deregistration returned");
        }
    }

    @Test
    void aPeerThatNeverAcknowledgesIsTakenForFailedAfterTheRevokeTimeout() throws InterruptedException {
        long timeoutMs = 150;
        try (Pair p = new Pair("sm,self", timeoutMs)) {
            p.exportToA();
            assertTrue(p.qb.postReceive(new ReceiveWorkRequest().wrId(7).sge(p.rx, 0, 64)));
            Deregistration d = p.deregisterElsewhere();
            p.untilB(() -> d.returned, "the deregistration (A is never progressed)");
            d.joinNow();
            assertTrue(d.tookNs >= timeoutMs * 1_000_000L, "returned after " + d.tookNs + " ns, before the revoke timeout");
            assertEquals(1, p.revocationsB()[3], "the revocation was settled by the timeout");
            assertEquals(0, p.revocationsB()[2], "the engine settled it before the waiting thread gave up");
            assertEquals(1, p.putsB()[5], "the region stays mapped (never freed under a late put) until B closes");
            WorkCompletion wc = p.next(p.cb);
            assertEquals(7, wc.wrId());
            assertNotEquals(WcStatus.SUCCESS, wc.status(), "B's route to the silent peer failed: " + wc);
        }
    }

    @Test
    void aPeerThatClosedSettlesTheRevocationAtOnce() throws InterruptedException {
        try (Pair p = new Pair("sm,self", 60_000)) {
            p.exportToA();
            p.hostA().close();
            Deregistration d = p.deregisterElsewhere();
            p.untilB(() -> d.returned, "the deregistration (A closed)");
            d.joinNow();
            assertTrue(d.tookNs < 30_000_000_000L, "took " + d.tookNs + " ns");
            assertEquals(0, p.revocationsB()[3], "not a timeout");
            assertEquals(0, p.putsB()[5], "unmapped");
        }
    }

    @Test
    void deregistrationOnTheEngineThreadDoesNotWaitAndTheRevocationCompletesLater() {
        try (Pair p = new Pair("sm,self", 60_000)) {
            p.exportToA();
            long t0 = System.nanoTime();
            p.dst.deregister(); // the test thread drives B: it would have to deliver the acknowledgement itself
            assertTrue(System.nanoTime() - t0 < 5_000_000_000L);
            assertEquals(1, p.revocationsB()[1], "counted as not awaited");
            assertEquals(0, p.revocationsB()[0]);
            p.drive(() -> p.putsB()[6] == 1 && p.putsB()[5] == 0, "the revocation and its acknowledgement");
        }
    }

    /**
     * {@code deregisterAsync} on the engine thread, where {@code deregister} cannot wait: it returns at once
     * with the keys dead, and its stage completes only once A's put under way landed and A acknowledged the
     * revocation, so memory taken back when the stage completes is never written after.
     */
    @Test
    void deregisterAsyncOnTheEngineThreadCompletesOnlyOnceAPutUnderWayLanded() {
        try (Pair p = new Pair("tcp", 60_000)) {
            p.exportToA();
            p.fill(9);
            assertTrue(p.qa.postSend(p.write(109)));
            for (int i = 0; i < 2000 && p.putsA()[0] < 2; i++) {
                p.hostA().progress(System.nanoTime());
            }
            assertEquals(2, p.putsA()[0], "A issued the put");
            java.util.concurrent.CompletableFuture<Void> outOfReach = p.dst.deregisterAsync().toCompletableFuture()
                .thenRun(() -> {
                    for (int i = 0; i < SIZE; i++) {
                        p.target.put(i, (byte) 0x5A);
                    }
                });
            assertFalse(p.dst.isValid());
            assertFalse(outOfReach.isDone(), "the stage completed while a put with the region's rkey was under way");
            assertEquals(1, p.revocationsB()[4], "counted as asynchronous");
            p.drive(outOfReach::isDone, "the revocation");
            assertEquals(0, p.putsB()[5], "unmapped");
            WorkCompletion wc = p.next(p.ca);
            assertNotEquals(WcStatus.SUCCESS, wc.status(), "the WRITE's header reached B after the deregistration: " + wc);
            p.drive(20_000);
            byte[] reused = new byte[SIZE];
            java.util.Arrays.fill(reused, (byte) 0x5A);
            assertArrayEquals(reused, p.targetBytes(), "nothing landed after the stage completed");
            assertTrue(p.dst.deregisterAsync().toCompletableFuture().isDone(), "a second call: completed at once");
        }
    }

    /**
     * Nobody progresses B (an INVOKER provider whose driver stopped, as a node closing before it releases
     * its regions): nothing could acknowledge, so the deregistration returns once the engine failed to take
     * the revocation up within the pickup window, not after the revoke timeout; the engine finishes it when
     * it runs again.
     */
    @Test
    void aDeregistrationNobodyProgressesReturnsAfterThePickupWindowNotTheTimeout() throws InterruptedException {
        try (Pair p = new Pair("sm,self", 60_000)) {
            p.exportToA();
            Deregistration d = p.deregisterElsewhere();
            d.joinNow();
            assertTrue(d.tookNs >= UcxDeregistrationWait.ENGINE_PICKUP_NS && d.tookNs < 10_000_000_000L, "took " + d.tookNs + " ns");
            assertEquals(1, p.revocationsB()[2], "counted: the wait ended before the revocation was settled");
            assertEquals(1, p.putsB()[5], "still mapped");
            p.drive(() -> p.putsB()[5] == 0, "the engine to finish the revocation once it runs");
        }
    }

    @Test
    void aRegionNeverHandedToAPeerDeregistersWithoutWaiting() throws InterruptedException {
        try (Pair p = new Pair("sm,self", 60_000)) {
            Deregistration d = p.deregisterElsewhere();
            d.joinNow();
            assertEquals(0, p.revocationsB()[0] + p.revocationsB()[1], "nothing to revoke");
        }
    }

    @Test
    void theRevokeTimeoutOptionIsCheckedAndThePutPathIsOnByDefault() {
        VerbsException bad = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("revoke-timeout", "0")));
        assertTrue(bad.getMessage().contains("revoke-timeout") && bad.getMessage().contains("[1, 600000]"), bad.getMessage());
        VerbsException word = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("revoke-timeout", "soon")));
        assertTrue(word.getMessage().contains("revoke-timeout='soon'"), word.getMessage());
        try (io.rdmaflux.verbs.RdmaProvider sm = RdmaProviders.open("ucx", Map.of("tls", "sm,self", "threading", "invoker",
                 "revoke-timeout", "250"))) {
            assertTrue(((UcxProvider) sm).putPathEnabled(0), "put=auto is the default: on over sm");
            assertEquals(250_000_000L, ((UcxProvider) sm).revokeTimeoutNs());
        }
    }
}
