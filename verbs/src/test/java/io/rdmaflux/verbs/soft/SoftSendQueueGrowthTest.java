package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The soft QP's send queue ({@link SendRing}) starts small and grows on demand up to {@code maxSendWr}:
 * work requests in flight across a doubling keep their order and content (inline payloads, SGE lists,
 * the engine's own marks), a queue at {@code maxSendWr} still refuses the post, and growth while the
 * engine consumes on another thread loses and reorders nothing.
 */
@ExtendWith(NoLeaksExtension.class)
class SoftSendQueueGrowthTest {
    private static final int LEN = 32;
    private static final int MAX_SEND_WR = 100;
    private static final long RETRY_TIMEOUT_NS = 50_000;

    private final SoftTwoNodes nodes = SoftTwoNodes.create();
    private final ProtectionDomain pa = nodes.a().devices().get(0).allocateProtectionDomain();
    private final ProtectionDomain pb = nodes.b().devices().get(0).allocateProtectionDomain();
    private final CompletionQueue ca = nodes.a().devices().get(0).createCompletionQueue(256);
    private final CompletionQueue cb = nodes.b().devices().get(0).createCompletionQueue(256);
    private final QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).maxSendWr(MAX_SEND_WR)
        .retryTimeoutNs(RETRY_TIMEOUT_NS).build());
    private final QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).maxReceiveWr(2 * MAX_SEND_WR)
        .retryTimeoutNs(RETRY_TIMEOUT_NS).build());
    private final SendRing ring = ((SoftQueuePair) qa).sendQueue;
    private final MemoryRegion src = pa.allocateMemory((MAX_SEND_WR + 1L) * LEN, Access.LOCAL_WRITE);
    private final MemoryRegion readInto = pa.allocateMemory((MAX_SEND_WR + 1L) * LEN, Access.LOCAL_WRITE);
    private final MemoryRegion dst = pb.allocateMemory((2L * MAX_SEND_WR + 1) * LEN, Access.LOCAL_WRITE | Access.REMOTE_READ);

    SoftSendQueueGrowthTest() {
        SoftTwoNodes.connectRc(qa, qb);
        for (int i = 0; i < MAX_SEND_WR; i++) {
            assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(i).sge(dst, (long) i * LEN, LEN)));
        }
        // what READs fetch: the upper half of dst, byte k of READ k's slice = (k + 1) ^ 0x40
        for (int k = 0; k < MAX_SEND_WR; k++) {
            for (int j = 0; j < LEN; j++) {
                dst.buffer().put((MAX_SEND_WR + k) * LEN + j, (byte) ((k + 1) ^ 0x40));
            }
        }
    }

    @AfterEach
    void close() {
        nodes.close();
    }

    /** Work request {@code k}: a READ every 8th (from 3), else a SEND; inline every third, several SGEs at k = 5 and 40. */
    private boolean post(int k) {
        SendWorkRequest wr = new SendWorkRequest().wrId(k).signaled(true);
        int off = k * LEN;
        if (k % 8 == 3) {
            wr.opcode(WrOpcode.RDMA_READ).remoteAddress(dst.address() + (long) (MAX_SEND_WR + k) * LEN).rkey(dst.rkey())
                .sge(readInto, off, LEN);
            return qa.postSend(wr);
        }
        for (int j = 0; j < LEN; j++) {
            src.buffer().put(off + j, (byte) (k + 1));
        }
        wr.opcode(WrOpcode.SEND);
        int sges = k == 5 ? 2 : k == 40 ? 4 : 1;
        for (int s = 0; s < sges; s++) {
            wr.addSge(src.address() + off + (long) s * LEN / sges, LEN / sges, src.lkey());
        }
        boolean inline = k % 3 == 1;
        boolean posted = qa.postSend(wr.inline(inline));
        if (posted && inline) {
            // an inline payload was copied at post: only the send queue has it now
            for (int j = 0; j < LEN; j++) {
                src.buffer().put(off + j, (byte) 0);
            }
        }
        return posted;
    }

    @Test
    void workRequestsInFlightAcrossDoublingsKeepTheirOrderAndContent() {
        assertEquals(SendRing.INITIAL_SLOTS, ring.slots(), "a new send queue costs its initial slots only");
        assertEquals(1, ring.sgeRows());
        // the initial slots filled (a READ, inline SENDs, a SEND with two SGEs) and transmitted; WR 1 (an
        // inline SEND) is lost on its first trip, so those after it go again, after the ring grew
        nodes.a().softDevice(0).softPort(1).setRail(RailConfig.builder().rcLoss(LossGenerator.multiGap(1, 1, Integer.MAX_VALUE)).build());
        for (int k = 0; k < SendRing.INITIAL_SLOTS; k++) {
            assertTrue(post(k));
        }
        assertEquals(2, ring.sgeRows(), "WR 5 has two SGEs");
        nodes.a().progress(nodes.clock().nanoTime());
        assertEquals(1, nodes.a().softDevice(0).softPort(1).rcFramesLost(), "WR 1 left (and was lost) before the ring grew");
        assertEquals(SendRing.INITIAL_SLOTS, ring.slots());

        for (int k = SendRing.INITIAL_SLOTS; k < MAX_SEND_WR; k++) {
            assertTrue(post(k), "WR " + k);
        }
        assertEquals(128, ring.slots(), "grown to the power of two at least maxSendWr, no further");
        assertEquals(4, ring.sgeRows(), "WR 40 has four SGEs");
        assertFalse(post(MAX_SEND_WR), "maxSendWr work requests outstanding: refused");

        List<WorkCompletion> sent = nodes.awaitCompletions(ca, MAX_SEND_WR);
        int sends = 0;
        for (int k = 0; k < MAX_SEND_WR; k++) {
            WorkCompletion wc = sent.get(k);
            assertEquals(k, wc.wrId(), "completions in posting order");
            assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
            assertEquals(LEN, wc.byteLength());
            boolean read = k % 8 == 3;
            assertEquals(read ? WcOpcode.RDMA_READ : WcOpcode.SEND, wc.opcode());
            if (!read) {
                sends++;
            }
        }
        assertTrue(nodes.a().softDevice(0).rcNakRetransmits() + nodes.a().softDevice(0).rcRetransmits() > 0,
            "the lost WR was sent again from the grown ring");
        List<WorkCompletion> received = nodes.awaitCompletions(cb, sends);
        int m = 0;
        for (int k = 0; k < MAX_SEND_WR; k++) {
            int off = k * LEN;
            if (k % 8 == 3) {
                for (int j = 0; j < LEN; j++) {
                    assertEquals((byte) ((k + 1) ^ 0x40), readInto.buffer().get(off + j), "READ " + k + " byte " + j);
                }
                continue;
            }
            assertEquals(m, received.get(m).wrId());
            assertEquals(LEN, received.get(m).byteLength());
            for (int j = 0; j < LEN; j++) {
                assertEquals((byte) (k + 1), dst.buffer().get(m * LEN + j), "SEND " + k + " (receive " + m + ") byte " + j);
            }
            m++;
        }
    }

    @Test
    void aQueueAtMaxSendWrRefusesThePostAsBeforeAndTakesMoreOnceCompletionsFreeIt() {
        for (int k = 0; k < MAX_SEND_WR; k++) {
            assertTrue(post(k), "WR " + k);
        }
        assertFalse(post(MAX_SEND_WR), "full at maxSendWr: postSend returns false, as a full queue always did");
        assertFalse(post(MAX_SEND_WR), "and again");
        assertEquals(128, ring.slots());
        nodes.awaitCompletions(ca, 30);
        assertTrue(post(MAX_SEND_WR), "room again once completions freed slots");
        assertEquals(128, ring.slots(), "no growth beyond the capacity's power of two");
    }

    @Test
    void aSmallQueueNeverGrowsPastItsCapacityAndOneAtTheInitialSizeNeverGrows() {
        QueuePair small = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).maxSendWr(5).build());
        QueuePair exact = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).maxSendWr(SendRing.INITIAL_SLOTS).build());
        QueuePair pb1 = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
        QueuePair pb2 = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
        SoftTwoNodes.connectRc(small, pb1);
        SoftTwoNodes.connectRc(exact, pb2);
        SendWorkRequest wr = new SendWorkRequest().opcode(WrOpcode.SEND).signaled(false).sge(src, 0, LEN);
        for (int k = 0; k < 5; k++) {
            assertTrue(small.postSend(wr.wrId(k)));
        }
        assertFalse(small.postSend(wr.wrId(5)));
        assertEquals(8, ((SoftQueuePair) small).sendQueue.slots());
        for (int k = 0; k < SendRing.INITIAL_SLOTS; k++) {
            assertTrue(exact.postSend(wr.wrId(k)));
        }
        assertFalse(exact.postSend(wr.wrId(SendRing.INITIAL_SLOTS)));
        assertEquals(SendRing.INITIAL_SLOTS, ((SoftQueuePair) exact).sendQueue.slots());
    }

    // ---------------------------------------------------------------- two threads on the ring itself

    private static final int STRESS_RINGS = 100;
    private static final int STRESS_CAPACITY = 1000;
    private static final int STRESS_WRS = 1500;
    private static final int INLINE = 16;

    /** The SGE count of work request {@code k}: mostly one, now and then more (growing the rows in flight). */
    private static int sgesOf(long k) {
        return k % 97 == 50 ? 1 + (int) (k / 97 % SendRing.SGES) : 1;
    }

    /**
     * A poster thread fills rings of capacity 1000 (16 slots to start, 1024 at most) as fast as they take
     * work requests, writing as {@link SendPoster} does; the test thread consumes them as the requesters do:
     * it reads each work request after {@link SendRing#engineTail}, marks some (an error found at transmit, a
     * READ's data arrived) and frees them some time later, checking that every field and its own marks came
     * through the doublings. 100 rings, so the growths meet the engine at many points.
     */
    @Test
    void growingWhileTheEngineConsumesOnAnotherThreadLosesReordersAndForgetsNothing() throws Exception {
        int doublings = 0;
        int full = 0;
        for (int r = 0; r < STRESS_RINGS; r++) {
            SendRing ring = new SendRing(STRESS_CAPACITY, INLINE);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean stop = new AtomicBoolean();
            Thread poster = new Thread(() -> {
                try {
                    postAll(ring, stop);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "test-send-ring-poster");
            poster.start();
            try {
                consumeAll(ring, new SplittableRandom(r));
            } finally {
                stop.set(true);
                poster.join(10_000);
            }
            assertNull(failure.get(), () -> "poster: " + failure.get());
            assertFalse(poster.isAlive());
            doublings += Integer.numberOfTrailingZeros(ring.slots() / SendRing.INITIAL_SLOTS);
            full += ring.slots() == 1024 ? 1 : 0;
        }
        // how far a ring grows depends on how far the engine lags; most reach the capacity
        assertTrue(doublings >= STRESS_RINGS && full > 0, doublings + " doublings over " + STRESS_RINGS + " rings, "
            + full + " grown to 1024 slots");
    }

    private static void postAll(SendRing ring, AtomicBoolean stop) {
        for (long k = 0; k < STRESS_WRS; k++) {
            long t = ring.tail.get();
            SendRing.Slots p;
            while ((p = ring.producerSlots(t)) == null) {
                if (stop.get()) {
                    return;
                }
                Thread.onSpinWait();
            }
            int n = sgesOf(k);
            if (n > p.sgeRows) {
                p = ring.withSgeRows(t, n);
            }
            int slot = (int) t & p.mask;
            for (int s = 0; s < n; s++) {
                int i = p.sgeIndex(slot, s);
                p.sgeAddress[i] = k << 8 | s;
                p.sgeLength[i] = (int) k + s;
                p.sgeLkey[i] = (int) ~k;
            }
            p.numSge[slot] = n;
            p.wrId[slot] = k;
            p.opcode[slot] = (byte) (k % 5 == 0 ? WrOpcode.RDMA_READ.ordinal() : WrOpcode.SEND.ordinal());
            p.readDone[slot] = false;
            p.remoteAddress[slot] = k * 3;
            p.imm[slot] = (int) k * 7;
            p.length[slot] = (int) (k % INLINE);
            boolean inline = k % 3 == 0;
            p.inline[slot] = inline;
            if (inline) {
                ByteBuffer data = p.inlineData;
                for (int j = 0; j < p.length[slot]; j++) {
                    data.put(slot * INLINE + j, (byte) (k + j));
                }
            }
            p.error[slot] = SendRing.NO_ERROR;
            p.errorDetail[slot] = null;
            ring.tail.lazySet(t + 1);
        }
    }

    private static void consumeAll(SendRing ring, SplittableRandom random) {
        long head = 0;
        long tx = 0;
        while (head < STRESS_WRS) {
            long tail = ring.engineTail();
            // "transmit": read and mark what was published
            for (; tx < tail; tx++) {
                int slot = (int) tx & ring.mask;
                same(tx, ring.wrId[slot], "wr id in transmit order", tx);
                checkPosted(ring, tx, slot);
                if (tx % 7 == 0) {
                    ring.markError(slot, WcStatus.LOC_PROT_ERR, "bad SGE");
                }
                if (tx % 5 == 0) {
                    ring.readDone[slot] = true;
                }
            }
            // "complete": free what was transmitted but a random lag (up to the capacity, so the poster
            // meets a full ring at every size), checking the marks survived
            long lag = tx == STRESS_WRS ? random.nextLong(tx - head + 1) : random.nextInt(STRESS_CAPACITY + 1);
            long upTo = Math.max(head, tx - lag);
            for (; head < upTo; head++) {
                int slot = (int) head & ring.mask;
                same(head, ring.wrId[slot], "wr id in completion order", head);
                checkPosted(ring, head, slot);
                boolean marked = head % 7 == 0;
                same(marked ? WcStatus.LOC_PROT_ERR.ordinal() : SendRing.NO_ERROR, ring.error[slot], "error mark", head);
                same(marked ? 1 : 0, "bad SGE".equals(ring.errorDetail[slot]) ? 1 : 0, "error detail", head);
                same(head % 5 == 0 ? 1 : 0, ring.readDone[slot] ? 1 : 0, "READ done mark", head);
            }
            ring.head.lazySet(head);
        }
    }

    private static void checkPosted(SendRing ring, long k, int slot) {
        int n = sgesOf(k);
        same(n, ring.numSge[slot], "SGE count", k);
        for (int s = 0; s < n; s++) {
            int i = ring.sgeIndex(slot, s);
            same(k << 8 | s, ring.sgeAddress[i], "SGE address", k);
            same(k + s, ring.sgeLength[i], "SGE length", k);
            same((int) ~k, ring.sgeLkey[i], "SGE lkey", k);
        }
        same(k * 3, ring.remoteAddress[slot], "remote address", k);
        same((int) k * 7, ring.imm[slot], "immediate", k);
        same(k % INLINE, ring.length[slot], "length", k);
        same(k % 3 == 0 ? 1 : 0, ring.inline[slot] ? 1 : 0, "inline flag", k);
        if (k % 3 == 0) {
            for (int j = 0; j < ring.length[slot]; j++) {
                same((byte) (k + j), ring.inlineData.get(slot * INLINE + j), "inline byte " + j, k);
            }
        }
    }

    /** Fails unless {@code actual} is {@code expected} (the message built only on failure: this runs ~10^6 times). */
    private static void same(long expected, long actual, String what, long k) {
        if (expected != actual) {
            fail(what + " of work request " + k + ": expected " + expected + " but was " + actual);
        }
    }
}
