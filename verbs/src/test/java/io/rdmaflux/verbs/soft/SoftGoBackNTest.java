package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VirtualClock;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each RC recovery path on its own, with one chosen frame lost or delayed (a {@link LossGenerator}
 * that drops frame k of a port, or a reorder rate of 1): lost request, lost ACK, gap, overtaken
 * request, 100 % loss, and the RC fault options' input checks and per-port placement.
 */
@ExtendWith(NoLeaksExtension.class)
class SoftGoBackNTest {
    private static final long RETRY_TIMEOUT_NS = 50_000;
    private static final int LEN = 64;

    private final SoftTwoNodes nodes = SoftTwoNodes.create();
    private final ProtectionDomain pa = nodes.a().devices().get(0).allocateProtectionDomain();
    private final ProtectionDomain pb = nodes.b().devices().get(0).allocateProtectionDomain();
    private final CompletionQueue ca = nodes.a().devices().get(0).createCompletionQueue(64);
    private final CompletionQueue cb = nodes.b().devices().get(0).createCompletionQueue(64);
    private final QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).retryTimeoutNs(RETRY_TIMEOUT_NS).retryCount(3).build());
    private final QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).retryTimeoutNs(RETRY_TIMEOUT_NS).build());
    private final MemoryRegion src = pa.allocateMemory(16 * LEN, Access.LOCAL_WRITE);
    private final MemoryRegion dst = pb.allocateMemory(16 * LEN, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
    private final SoftDevice da = nodes.a().softDevice(0);
    private final SoftDevice db = nodes.b().softDevice(0);

    SoftGoBackNTest() {
        SoftTwoNodes.connectRc(qa, qb);
        for (int i = 0; i < 16 * LEN; i++) {
            src.buffer().put(i, (byte) (i / LEN + 1));
        }
        for (int i = 0; i < 16; i++) {
            assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(i).sge(dst, (long) i * LEN, LEN)));
        }
    }

    @AfterEach
    void close() {
        nodes.close();
    }

    /** A rail that loses frame {@code k} (0-based) of those its port sends, and no other. */
    private static RailConfig losesFrame(int k) {
        return RailConfig.builder().rcLoss(LossGenerator.multiGap(k, 1, Integer.MAX_VALUE)).build();
    }

    private void sendAll(int count) {
        for (int i = 0; i < count; i++) {
            assertTrue(qa.postSend(new SendWorkRequest().opcode(WrOpcode.SEND).wrId(i).signaled(true).sge(src, (long) i * LEN, LEN)));
        }
    }

    private void assertDeliveredOnceInOrder(int count) {
        List<WorkCompletion> sent = nodes.awaitCompletions(ca, count);
        List<WorkCompletion> received = nodes.awaitCompletions(cb, count);
        for (int i = 0; i < count; i++) {
            assertEquals(WcStatus.SUCCESS, sent.get(i).status(), sent.get(i)::toString);
            assertEquals(i, sent.get(i).wrId());
            assertEquals(WcStatus.SUCCESS, received.get(i).status(), received.get(i)::toString);
            assertEquals(i, received.get(i).wrId());
            for (int j = 0; j < LEN; j++) {
                assertEquals((byte) (i + 1), dst.buffer().get(i * LEN + j), "message " + i + " byte " + j);
            }
        }
        // long enough for any retransmission or held-back frame to arrive
        long until = nodes.clock().nanoTime() + 4 * RETRY_TIMEOUT_NS;
        nodes.runUntil(() -> nodes.clock().nanoTime() > until, 1_000, 100_000);
        List<WorkCompletion> late = new ArrayList<>();
        ca.poll(16, wc -> late.add(wc.copy()));
        cb.poll(16, wc -> late.add(wc.copy()));
        assertEquals(List.of(), late, "no second completion");
    }

    @Test
    void lostLastRequestIsRetransmittedAfterTheAckTimeout() {
        da.softPort(1).setRail(losesFrame(2));
        sendAll(3);

        assertDeliveredOnceInOrder(3);

        assertEquals(1, da.softPort(1).rcFramesLost());
        assertEquals(1, da.rcRetransmits(), "one go-back-N from the ACK timer");
        assertEquals(0, da.rcNakRetransmits());
        assertEquals(0, db.rcSequenceNaksSent(), "no later request showed the gap");
    }

    @Test
    void lostRequestBeforeOthersIsNakedAsASequenceErrorAndRetransmittedFromThere() {
        da.softPort(1).setRail(losesFrame(1));
        sendAll(5);

        assertDeliveredOnceInOrder(5);

        assertEquals(1, db.rcSequenceNaksSent(), "one NAK for the gap, the later requests dropped silently");
        assertEquals(1, da.rcNakRetransmits(), "go-back-N at once on the NAK");
        assertEquals(0, da.rcRetransmits(), "no ACK timeout");
        assertEquals(0, db.rcDuplicateRequests(), "the NAK acknowledged what came before the gap");
    }

    @Test
    void lostAckMakesTheRetransmissionADuplicateThatIsAcknowledgedAgainButNotDelivered() {
        db.softPort(1).setRail(losesFrame(0));
        sendAll(1);

        assertDeliveredOnceInOrder(1);

        assertEquals(1, db.softPort(1).rcFramesLost(), "the ACK");
        assertEquals(1, da.rcRetransmits());
        assertEquals(1, db.rcDuplicateRequests(), "the retransmitted SEND arrived again, was re-acknowledged");
    }

    @Test
    void lostAckOfAnRdmaWriteDoesNotPlaceTheDataTwice() {
        db.softPort(1).setRail(losesFrame(0));
        assertTrue(qa.postSend(new SendWorkRequest().opcode(WrOpcode.RDMA_WRITE).wrId(1).signaled(true).sge(src, 0, LEN)
            .remoteAddress(dst.address() + 15 * LEN).rkey(dst.rkey())));
        // the requester's retransmission is held until the responder's side changed the target
        nodes.runUntil(() -> db.softPort(1).rcFramesLost() == 1, 0, 100);
        assertEquals((byte) 1, dst.buffer().get(15 * LEN));
        for (int j = 0; j < LEN; j++) {
            dst.buffer().put(15 * LEN + j, (byte) 0x77);
        }

        List<WorkCompletion> sent = nodes.awaitCompletions(ca, 1);

        assertEquals(WcStatus.SUCCESS, sent.get(0).status(), sent.get(0)::toString);
        assertEquals(1, da.rcRetransmits());
        assertEquals(1, db.rcDuplicateRequests());
        assertEquals((byte) 0x77, dst.buffer().get(15 * LEN), "the duplicate WRITE was not placed again");
    }

    @Test
    void overtakenRequestIsNakedAndTheLateOriginalIsADuplicate() {
        // frame 0 held back 20 us, the four after it arrive first
        da.softPort(1).setRail(RailConfig.builder().rcReorderRate(1.0).rcReorderDelayNs(20_000).build());
        assertTrue(qa.postSend(new SendWorkRequest().opcode(WrOpcode.SEND).wrId(0).signaled(true).sge(src, 0, LEN)));
        nodes.progress();
        da.softPort(1).setRail(RailConfig.UNSHAPED);
        for (int i = 1; i < 5; i++) {
            assertTrue(qa.postSend(new SendWorkRequest().opcode(WrOpcode.SEND).wrId(i).signaled(true).sge(src, (long) i * LEN, LEN)));
        }

        assertDeliveredOnceInOrder(5);

        assertEquals(1, da.softPort(1).rcFramesReordered(), "counted before the rail changed");
        assertEquals(1, db.rcSequenceNaksSent());
        assertEquals(1, da.rcNakRetransmits());
        assertTrue(db.rcDuplicateRequests() >= 1, "the late original, after its retransmission was accepted");
    }

    @Test
    void everyFrameLostEndsInRetryExceededAfterRetryCountRetries() {
        da.softPort(1).setRail(RailConfig.builder().rcLossRate(1.0).build());
        sendAll(3);

        List<WorkCompletion> done = nodes.awaitCompletions(ca, 3);

        assertEquals(WcStatus.RETRY_EXC_ERR, done.get(0).status(), done.get(0)::toString);
        assertEquals(WcStatus.WR_FLUSH_ERR, done.get(1).status());
        assertEquals(WcStatus.WR_FLUSH_ERR, done.get(2).status());
        assertEquals(3, da.rcRetransmits(), "retryCount = 3 retries, then the error");
        assertEquals(4 * 3, da.softPort(1).rcFramesLost(), "the first try and three retries of three requests");
        assertEquals(QpState.ERROR, qa.state());
        List<WorkCompletion> received = new ArrayList<>();
        cb.poll(16, wc -> received.add(wc.copy()));
        assertEquals(List.of(), received);
    }

    @ParameterizedTest
    @ValueSource(doubles = {-0.1, 1.5, Double.NaN, Double.POSITIVE_INFINITY})
    void rcFaultProbabilitiesOutsideZeroToOneAreRejected(double p) {
        IllegalArgumentException loss = assertThrows(IllegalArgumentException.class, () -> RailConfig.builder().rcLossRate(p).build());
        assertEquals("rcLossRate must be a probability in [0, 1] but it was " + p, loss.getMessage());
        IllegalArgumentException dup = assertThrows(IllegalArgumentException.class, () -> RailConfig.builder().rcDuplicateRate(p).build());
        assertEquals("rcDuplicateRate must be a probability in [0, 1] but it was " + p, dup.getMessage());
        IllegalArgumentException reorder = assertThrows(IllegalArgumentException.class, () -> RailConfig.builder().rcReorderRate(p).build());
        assertEquals("rcReorderRate must be a probability in [0, 1] but it was " + p, reorder.getMessage());
        IllegalArgumentException corrupt = assertThrows(IllegalArgumentException.class, () -> RailConfig.builder().rcCorruptRate(p).build());
        assertEquals("rcCorruptRate must be a probability in [0, 1] but it was " + p, corrupt.getMessage());
    }

    @Test
    void rcReorderDelayMustBePositiveAndLossSetOnce() {
        IllegalArgumentException delay = assertThrows(IllegalArgumentException.class, () -> RailConfig.builder().rcReorderDelayNs(0).build());
        assertEquals("rcReorderDelayNs > 0 required but it was 0", delay.getMessage());
        IllegalArgumentException both = assertThrows(IllegalArgumentException.class,
            () -> RailConfig.builder().rcLossRate(0.1).rcLoss(LossGenerator.fixedGap(3)).build());
        assertTrue(both.getMessage().startsWith("set rcLossRate (0.1) or rcLoss ("), both.getMessage());
    }

    @Test
    void rcFaultsAreOffByDefaultAndSurviveToBuilder() {
        assertFalse(RailConfig.UNSHAPED.hasRcFaults());
        RailConfig r = RailConfig.builder().rcLossRate(0.05).rcDuplicateRate(0.01).rcFaultSeed(9).build();
        assertTrue(r.hasRcFaults());
        assertTrue(RailConfig.builder().rcCorruptRate(0.01).build().hasRcFaults(), "corruption alone is an RC fault");
        RailConfig copy = r.toBuilder().rcReorderRate(0.02).rcCorruptRate(0.03).build();
        assertEquals(0.03, copy.rcCorruptRate());
        assertEquals(0.03, copy.toBuilder().build().rcCorruptRate());
        assertEquals(0.05, copy.rcLossRate());
        assertEquals(0.01, copy.rcDuplicateRate());
        assertEquals(0.02, copy.rcReorderRate());
        assertEquals(9, copy.rcFaultSeed());
        assertTrue(r.toString().contains("rc{loss=random(0.05, seed=9)"), r::toString);
    }

    @Test
    void portRailGivesOnePortRcFaultsAndLeavesTheOthers() {
        VirtualClock clock = new VirtualClock();
        RailConfig lossy = RailConfig.builder().rcLossRate(0.05).rcDuplicateRate(0.01).rcReorderRate(0.01).rcFaultSeed(3).build();
        try (SoftProvider p = SoftProvider.builder().fabric(SoftFabric.mem("port-rail")).clock(clock)
            .threadingMode(ThreadingMode.INVOKER).portsPerDevice(2).portRail(2, lossy).build()) {
            assertFalse(p.softDevice(0).softPort(1).rail().hasRcFaults());
            assertEquals(lossy, p.softDevice(0).softPort(2).rail());
        }
        io.rdmaflux.verbs.VerbsException beyond = assertThrows(io.rdmaflux.verbs.VerbsException.class,
            () -> SoftProvider.builder().fabric(SoftFabric.mem("port-rail-2")).threadingMode(ThreadingMode.INVOKER)
                .portRail(3, lossy).build());
        assertTrue(beyond.getMessage().contains("portRail(3, ..) names a port beyond portsPerDevice 1"), beyond.getMessage());
    }
}
