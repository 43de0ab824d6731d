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
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * RC streams of {@value #N} messages over rails that lose, duplicate and reorder RC frames in both
 * directions (requests from host a, ACKs, NAKs and READ responses from host b), in virtual time.
 * Every message must arrive exactly once, in order and byte-exact, and every send complete with
 * SUCCESS; the port and NIC counters prove the faults and the go-back-N recovery happened.
 *
 * <p>Exactly once: the test stamps each target slot (receive buffer, RDMA WRITE target, READ
 * destination) with a marker as soon as its message is seen complete; a second placement by a
 * duplicate or a retransmission would overwrite the marker, which is checked after the wire has
 * drained.
 */
@ExtendWith(NoLeaksExtension.class)
class SoftRcFaultTest {
    static final int N = 2_000;
    private static final int SLOT = 256;
    private static final long RETRY_TIMEOUT_NS = 20_000;
    private static final long REORDER_DELAY_NS = 3_000;
    private static final byte MARK = (byte) 0xEE;

    /** What a stream is made of. */
    enum Op { SEND, RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ }

    static int lengthOf(int i) {
        return 16 + (i * 37) % (SLOT - 16);
    }

    static byte byteOf(int i, int j) {
        byte b = (byte) (i * 31 + j * 7 + 1);
        return b == MARK ? 0 : b;
    }

    /** What one stream run observed. */
    record Result(long lost, long duplicated, long reordered, long timeoutRetransmits, long nakRetransmits,
                  long duplicateRequests, long sequenceNaks, long corrupted, long icrcDrops) {
        long retransmits() {
            return timeoutRetransmits + nakRetransmits;
        }
    }

    static RailConfig.Builder faulty() {
        return RailConfig.builder().rcReorderDelayNs(REORDER_DELAY_NS);
    }

    // ---------------------------------------------------------------- tests

    @ParameterizedTest
    @EnumSource(Op.class)
    void onePercentLossDeliversEveryMessageOnceInOrder(Op op) {
        Result r = stream(op, faulty().rcLossRate(0.01).rcFaultSeed(11).build());
        assertTrue(r.lost() > 0, r::toString);
        assertTrue(r.retransmits() > 0, r::toString);
    }

    @ParameterizedTest
    @EnumSource(Op.class)
    void fivePercentLossDeliversEveryMessageOnceInOrder(Op op) {
        Result r = stream(op, faulty().rcLossRate(0.05).rcFaultSeed(12).build());
        assertTrue(r.lost() > 0, r::toString);
        assertTrue(r.timeoutRetransmits() > 0, "a lost last request or response leaves only the timer: " + r);
        assertTrue(r.nakRetransmits() > 0, "a lost request followed by the next makes a gap: " + r);
    }

    /**
     * At 20 % loss each way a retry of the oldest request fails with p ~ 0.36 (request or its response
     * lost), so {@code retryCount} 7 is exhausted (8 failed tries in a row, RETRY_EXC_ERR, correctly)
     * in roughly 1 of 2 runs of 2,000 RDMA READs and in a few percent of SEND runs; the seed is one of
     * the runs where it is not.
     */
    @ParameterizedTest
    @EnumSource(Op.class)
    void twentyPercentLossDeliversEveryMessageOnceInOrder(Op op) {
        Result r = stream(op, faulty().rcLossRate(0.20).rcFaultSeed(6).build());
        assertTrue(r.lost() > 0, r::toString);
        assertTrue(r.retransmits() > 0, r::toString);
        assertTrue(r.sequenceNaks() > 0, "a lost request followed by the next makes a gap: " + r);
    }

    @ParameterizedTest
    @EnumSource(Op.class)
    void duplicatedFramesAreExecutedOnce(Op op) {
        Result r = stream(op, faulty().rcDuplicateRate(0.10).rcFaultSeed(14).build());
        assertTrue(r.duplicated() > 0, r::toString);
        assertTrue(r.duplicateRequests() > 0, "the responder saw duplicates and re-acknowledged them: " + r);
    }

    @ParameterizedTest
    @EnumSource(Op.class)
    void reorderedFramesAreRecoveredByGoBackN(Op op) {
        Result r = stream(op, faulty().rcReorderRate(0.05).rcFaultSeed(15).build());
        assertTrue(r.reordered() > 0, r::toString);
        assertTrue(r.sequenceNaks() > 0, "an overtaken request makes the responder NAK a sequence error: " + r);
        assertTrue(r.retransmits() > 0, r::toString);
    }

    @ParameterizedTest
    @EnumSource(Op.class)
    void lossDuplicationAndReorderingTogether(Op op) {
        Result r = stream(op, faulty().rcLossRate(0.05).rcDuplicateRate(0.05).rcReorderRate(0.05).rcFaultSeed(16).build());
        assertTrue(r.lost() > 0 && r.duplicated() > 0 && r.reordered() > 0, r::toString);
        assertTrue(r.retransmits() > 0, r::toString);
        assertTrue(r.duplicateRequests() > 0, r::toString);
    }

    /**
     * Corrupted requests and responses (a byte of the payload, or a bit of the PSN of a frame without one,
     * flipped in a copy) fail the receiving NIC's ICRC check, are dropped and counted, and retransmission
     * recovers them: every message byte-exact, once, and every corruption caught.
     */
    @ParameterizedTest
    @EnumSource(Op.class)
    void corruptedFramesAreDroppedByTheIcrcCheckAndRetransmitted(Op op) {
        Result r = stream(op, faulty().rcCorruptRate(0.01).rcFaultSeed(18).build());
        assertTrue(r.corrupted() > 0, r::toString);
        assertEquals(r.corrupted(), r.icrcDrops(), "every corrupted frame is dropped by the ICRC check: " + r);
        assertEquals(0, r.lost(), r::toString);
        assertTrue(r.retransmits() > 0, r::toString);
    }

    @ParameterizedTest
    @EnumSource(Op.class)
    void burstLossFromALossGenerator(Op op) {
        Result r = stream(op, faulty().rcLoss(LossGenerator.burst(0.02, 0.5, 17)).build());
        assertTrue(r.lost() > 0, r::toString);
        assertTrue(r.retransmits() > 0, r::toString);
    }

    // ---------------------------------------------------------------- the stream

    /**
     * Streams {@value #N} messages of {@code op} from host a to host b (READ: a reads them from b)
     * over {@code rail} on both hosts, checks each as it completes, drains the wire, checks nothing
     * was placed or completed twice, and returns the counters.
     */
    static Result stream(Op op, RailConfig rail) {
        return stream(op, rail, N, UnaryOperator.identity());
    }

    static Result stream(Op op, RailConfig rail, int n, UnaryOperator<SoftProvider.Builder> customizer) {
        try (SoftTwoNodes nodes = SoftTwoNodes.create(1, rail, customizer)) {
            ProtectionDomain pa = nodes.a().devices().get(0).allocateProtectionDomain();
            ProtectionDomain pb = nodes.b().devices().get(0).allocateProtectionDomain();
            CompletionQueue ca = nodes.a().devices().get(0).createCompletionQueue(4096);
            CompletionQueue cb = nodes.b().devices().get(0).createCompletionQueue(4096);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).retryTimeoutNs(RETRY_TIMEOUT_NS).retryCount(7).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).retryTimeoutNs(RETRY_TIMEOUT_NS).build());
            SoftTwoNodes.connectRc(qa, qb);
            int size = n * SLOT;
            MemoryRegion ma = pa.allocateMemory(size, Access.LOCAL_WRITE);
            MemoryRegion mb = pb.allocateMemory(size, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            // the messages: at a's slots, or at b's for READ
            ByteBuffer source = (op == Op.RDMA_READ ? mb : ma).buffer();
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < lengthOf(i); j++) {
                    source.put(i * SLOT + j, byteOf(i, j));
                }
            }
            ByteBuffer target = (op == Op.RDMA_READ ? ma : mb).buffer();
            boolean receives = op == Op.SEND || op == Op.RDMA_WRITE_WITH_IMM;
            int spare = 16;
            int[] counts = new int[3]; // posted sends, send completions, receive completions
            int[] receivesPosted = {0};
            List<String> failures = new ArrayList<>();
            SendWorkRequest wr = new SendWorkRequest();
            ReceiveWorkRequest rwr = new ReceiveWorkRequest();
            int passes = 0;
            while (counts[1] < n || (receives && counts[2] < n)) {
                while (counts[0] < n) {
                    int i = counts[0];
                    wr.reset().wrId(i).signaled(true);
                    switch (op) {
                        case SEND -> wr.opcode(WrOpcode.SEND).sge(ma, (long) i * SLOT, lengthOf(i));
                        case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> {
                            wr.opcode(op == Op.RDMA_WRITE ? WrOpcode.RDMA_WRITE : WrOpcode.RDMA_WRITE_WITH_IMM)
                                .sge(ma, (long) i * SLOT, lengthOf(i)).remoteAddress(mb.address() + (long) i * SLOT).rkey(mb.rkey());
                            if (op == Op.RDMA_WRITE_WITH_IMM) {
                                wr.immediate(i);
                            }
                        }
                        case RDMA_READ -> wr.opcode(WrOpcode.RDMA_READ).sge(ma, (long) i * SLOT, lengthOf(i))
                            .remoteAddress(mb.address() + (long) i * SLOT).rkey(mb.rkey());
                    }
                    if (!qa.postSend(wr)) {
                        break;
                    }
                    counts[0]++;
                }
                while (receives && receivesPosted[0] < n + spare && receivesPosted[0] - counts[2] < 200) {
                    int k = receivesPosted[0];
                    // spare receives past n point at slot 0; they must never be consumed
                    assertTrue(qb.postReceive(rwr.wrId(k).sge(mb, (long) (k < n ? k : 0) * SLOT, SLOT)));
                    receivesPosted[0]++;
                }
                int work = nodes.progress();
                ca.poll(64, wc -> {
                    int k = counts[1]++;
                    if (wc.status() != WcStatus.SUCCESS || wc.wrId() != k) {
                        failures.add("send completion " + k + ": " + wc);
                    } else if (op == Op.RDMA_WRITE || op == Op.RDMA_READ) {
                        checkAndMark(target, k, failures);
                    }
                });
                cb.poll(64, wc -> {
                    int k = counts[2]++;
                    WcOpcode expected = op == Op.SEND ? WcOpcode.RECV : WcOpcode.RECV_RDMA_WITH_IMM;
                    boolean ok = wc.status() == WcStatus.SUCCESS && wc.wrId() == k && wc.opcode() == expected
                        && (op == Op.SEND ? wc.byteLength() == lengthOf(k) : wc.hasImmediate() && wc.immediate() == k);
                    if (!ok) {
                        failures.add("receive completion " + k + ": " + wc);
                    } else {
                        checkAndMark(target, k, failures);
                    }
                });
                assertTrue(failures.isEmpty(), () -> failures.subList(0, Math.min(5, failures.size())).toString());
                if (work == 0) {
                    nodes.clock().advance(1_000);
                }
                assertTrue(++passes < 2_000_000, () -> "stuck after " + counts[1] + " send and " + counts[2]
                    + " receive completions of " + n + ": " + qa + ", " + qb);
            }
            // let every delayed or duplicated frame still on the wire arrive
            for (int i = 0; i < 200; i++) {
                nodes.progress();
                nodes.clock().advance(1_000);
            }
            List<WorkCompletion> late = new ArrayList<>();
            ca.poll(16, wc -> late.add(wc.copy()));
            cb.poll(16, wc -> late.add(wc.copy()));
            assertEquals(List.of(), late, "no second completion");
            for (int k = 0; k < n; k++) {
                for (int j = 0; j < lengthOf(k); j++) {
                    if (target.get(k * SLOT + j) != MARK) {
                        throw new AssertionError("message " + k + " was placed again after it completed (byte " + j + ")");
                    }
                }
            }
            SoftPort a = nodes.a().softDevice(0).softPort(1);
            SoftPort b = nodes.b().softDevice(0).softPort(1);
            SoftDevice da = nodes.a().softDevice(0);
            SoftDevice db = nodes.b().softDevice(0);
            return new Result(a.rcFramesLost() + b.rcFramesLost(), a.rcFramesDuplicated() + b.rcFramesDuplicated(),
                a.rcFramesReordered() + b.rcFramesReordered(), da.rcRetransmits(), da.rcNakRetransmits(),
                db.rcDuplicateRequests(), db.rcSequenceNaksSent(), a.rcFramesCorrupted() + b.rcFramesCorrupted(),
                da.icrcDrops() + db.icrcDrops());
        }
    }

    private static void checkAndMark(ByteBuffer target, int k, List<String> failures) {
        for (int j = 0; j < lengthOf(k); j++) {
            if (target.get(k * SLOT + j) != byteOf(k, j)) {
                failures.add("message " + k + " byte " + j + " is " + target.get(k * SLOT + j) + ", expected " + byteOf(k, j));
                return;
            }
            target.put(k * SLOT + j, MARK);
        }
    }
}
