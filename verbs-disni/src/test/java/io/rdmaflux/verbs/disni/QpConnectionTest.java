package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** The rdma_cm state machine of a QP: roles, holding, establishment, refused / unreachable / rejected peers. */
class QpConnectionTest {
    private static QpConnection conn(QueuePair qp) {
        return ((DisniQueuePair) qp).connection();
    }

    @Test
    void theLowerEndpointConnectsTheOtherAcceptsAndHeldWorkRequestsGoOutOnEstablishment() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair qa = t.qpA(UnaryOperator.identity());
            QueuePair qb = t.qpB(UnaryOperator.identity());
            MemoryRegion src = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            MemoryRegion dst = t.pb.allocateMemory(64, Access.LOCAL_WRITE);
            src.buffer().put(0, new byte[] {9, 8, 7});
            SoftSeam.Counters c = t.fx.seam.counters;
            qb.init();
            assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(5).sge(dst, 0, 64)), "receives may be posted in INIT");
            qa.connect(qb.localEndpoint());
            assertTrue(conn(qa).isActive(), "host A's address orders first");
            assertTrue(qa.postSend(new SendWorkRequest().wrId(6).sge(src, 0, 3)), "sends are accepted in RTS before the CM is done");
            assertEquals(0, c.sendExecutes + c.recvExecutes, "nothing reached the native layer: no native QP yet");
            t.run(20);
            assertEquals(QpState.INIT, qb.state(), "B is still in INIT: A's request waits for B's RTR");
            assertEquals(QpConnection.Phase.CONNECTING, conn(qa).phase());
            assertEquals(QpConnection.Phase.IDLE, conn(qb).phase());
            qb.connect(qa.localEndpoint());
            assertFalse(conn(qb).isActive());
            t.runUntil(() -> conn(qa).phase() == QpConnection.Phase.ESTABLISHED && conn(qb).phase() == QpConnection.Phase.ESTABLISHED);
            WorkCompletion s = t.await(t.ca, 1).get(0);
            assertEquals(WcStatus.SUCCESS, s.status(), s::toString);
            assertEquals(6, s.wrId());
            assertEquals(qa.qpNumber(), s.qpNumber(), "completions carry the SPI QP number, not the native one");
            WorkCompletion r = t.await(t.cb, 1).get(0);
            assertEquals(5, r.wrId());
            assertEquals(WcOpcode.RECV, r.opcode());
            byte[] got = new byte[3];
            dst.buffer().get(0, got);
            assertArrayEquals(new byte[] {9, 8, 7}, got);
            assertEquals(1, c.sendExecutes);
            assertEquals(1, c.recvExecutes);
        }
    }

    /**
     * A peer's CONNECT_REQUEST still queued on this provider's event channel when it closes (its thread, or
     * whoever progressed it, stopped dispatching first) brings an id of its own: closing must destroy it, or the
     * channel cannot be destroyed (EBUSY) and the id leaks. Seen once in CI as a leak of the DEDICATED TCK.
     */
    @Test
    void aConnectRequestNobodyDispatchedIsDestroyedWhenTheProviderCloses() {
        DisniTestSupport t = new DisniTestSupport();
        QueuePair qa = t.qpA(UnaryOperator.identity());
        QueuePair qb = t.qpB(UnaryOperator.identity());
        SoftSeam.Counters c = t.fx.seam.counters;
        qb.init();
        qa.connect(qb.localEndpoint());
        long before = c.idsCreated;
        // only host A runs: its id resolves and connects, which queues the request (and its new id) at B
        for (int i = 0; i < 200 && c.idsCreated == before; i++) {
            t.fx.a.progress(t.fx.nowNs());
            t.fx.advanceNs(1_000);
        }
        assertEquals(before + 1, c.idsCreated, "the connect request's id exists, queued on B's channel");
        t.close(); // closes both providers and asserts every id, channel and QP was destroyed
    }

    @Test
    void aPeerThatIsGoneRefusesAndHeldSendsFailWithRetryExceededThenFlush() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair qa = t.qpA(UnaryOperator.identity());
            QueuePair qb = t.qpB(UnaryOperator.identity());
            QpEndpoint gone = qb.localEndpoint();
            qb.close();
            MemoryRegion mr = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            qa.init();
            assertTrue(qa.postReceive(new ReceiveWorkRequest().wrId(1).sge(mr, 0, 64)));
            qa.connect(gone);
            assertTrue(qa.postSend(new SendWorkRequest().wrId(2).sge(mr, 0, 8)));
            assertTrue(qa.postSend(new SendWorkRequest().wrId(3).sge(mr, 0, 8).signaled(false)));
            List<WorkCompletion> wcs = t.await(t.ca, 3);
            WorkCompletion first = wcs.stream().filter(w -> w.wrId() == 2).findFirst().orElseThrow();
            assertEquals(WcStatus.RETRY_EXC_ERR, first.status(), first::toString);
            assertTrue(first.detail().contains("refused") && first.detail().contains(gone.address().toString())
                && first.detail().contains("RDMA_CM_EVENT_REJECTED"), first.detail());
            assertEquals(WcStatus.WR_FLUSH_ERR, wcs.stream().filter(w -> w.wrId() == 3).findFirst().orElseThrow().status(),
                "an unsignaled send still completes in error");
            assertEquals(WcStatus.WR_FLUSH_ERR, wcs.stream().filter(w -> w.wrId() == 1).findFirst().orElseThrow().status());
            assertEquals(QpState.ERROR, qa.state());
            assertEquals(QpConnection.Phase.FAILED, conn(qa).phase());
            assertTrue(qa.postSend(new SendWorkRequest().wrId(4).sge(mr, 0, 8)), "posting in ERROR completes with a flush");
            assertEquals(WcStatus.WR_FLUSH_ERR, t.await(t.ca, 1).get(0).status());
        }
    }

    @Test
    void anAddressNoDeviceHasIsUnreachable() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair qa = t.qpA(UnaryOperator.identity());
            MemoryRegion mr = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            PortAddress nowhere = new PortAddress(DisniProvider.FABRIC, "127.0.9.9", 20_999);
            qa.connect(new QpEndpoint(nowhere, 0x999, 0, 4096));
            assertTrue(qa.postSend(new SendWorkRequest().wrId(1).sge(mr, 0, 8)));
            WorkCompletion wc = t.await(t.ca, 1).get(0);
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
            assertTrue(wc.detail().contains("unreachable") && wc.detail().contains("ADDR_ERROR") && wc.detail().contains("127.0.9.9"), wc.detail());
        }
    }

    @Test
    void aSilentHostTimesOutAsUnreachable() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair qa = t.qpA(UnaryOperator.identity());
            QueuePair qb = t.qpB(UnaryOperator.identity());
            t.fx.seam.silence(DisniSoftFixture.IP_B);
            MemoryRegion mr = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            qa.connect(qb.localEndpoint());
            assertTrue(qa.postSend(new SendWorkRequest().wrId(1).sge(mr, 0, 8)));
            WorkCompletion wc = t.await(t.ca, 1).get(0);
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
            assertTrue(wc.detail().contains("did not answer") && wc.detail().contains("UNREACHABLE"), wc.detail());
        }
    }

    @Test
    void aRequestFromAnotherQpThanTheOneGivenIsRejected() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair qa = t.qpA(UnaryOperator.identity());
            QueuePair intruder = t.qpA(UnaryOperator.identity());
            QueuePair qb = t.qpB(UnaryOperator.identity());
            MemoryRegion mr = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            qb.connect(qa.localEndpoint()); // B expects A
            intruder.connect(qb.localEndpoint()); // but another QP of A's host asks
            assertTrue(intruder.postSend(new SendWorkRequest().wrId(1).sge(mr, 0, 8)));
            WorkCompletion wc = t.await(t.ca, 1).get(0);
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
            assertTrue(wc.detail().contains("rejected by the peer (reason 28)"), wc.detail());
            assertEquals(QpConnection.Phase.IDLE, conn(qb).phase(), "B still waits for A");
            qa.connect(qb.localEndpoint());
            t.runUntil(() -> conn(qb).phase() == QpConnection.Phase.ESTABLISHED);
            assertEquals(QpState.RTS, qb.state());
        }
    }

    @Test
    void aQpMovedToErrorBeforeEstablishmentStillConnectsThenDisconnectsSoThePeerSeesItDead() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair qa = t.qpA(b -> b.retryCount(1).retryTimeoutNs(20_000));
            QueuePair qb = t.qpB(UnaryOperator.identity());
            MemoryRegion mr = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            qb.toError();
            assertTrue(qa.postSend(new SendWorkRequest().wrId(1).sge(mr, 0, 8)));
            WorkCompletion wc = t.await(t.ca, 1).get(0);
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status(), wc::toString);
            assertTrue(wc.detail().startsWith("IBV_WC_RETRY_EXC_ERR"), "the NIC's error, not the CM's: " + wc.detail());
            assertEquals(QpConnection.Phase.DISCONNECTED, conn(qa).phase(), "A saw B's disconnect");
            assertEquals(QpState.ERROR, qa.state());
        }
    }

    @Test
    void sendsHeldForAPeerThatNeverConnectsFailAfterTheDeadlineAndALateRequestIsRejected() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair qa = t.qpA(UnaryOperator.identity());
            QueuePair qb = t.qpB(b -> b.retryCount(1).retryTimeoutNs(1_000_000));
            MemoryRegion mr = t.pb.allocateMemory(64, Access.LOCAL_WRITE);
            qb.connect(qa.localEndpoint()); // B accepts; A, the connecting side, never calls connect
            assertTrue(qb.postSend(new SendWorkRequest().wrId(1).sge(mr, 0, 8)));
            t.run(100);
            List<WorkCompletion> none = new java.util.ArrayList<>();
            t.cb.poll(10, w -> none.add(w.copy()));
            assertEquals(List.of(), none, "held, not failed, while the CM may still be at work");
            long deadlineNs = 3 * 2000 * 1_000_000L + 2 * 1_000_000L;
            t.fx.advanceNs(deadlineNs);
            WorkCompletion wc = t.await(t.cb, 1).get(0);
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
            assertTrue(wc.detail().contains("never connected") && wc.detail().contains(qa.localEndpoint().address().toString())
                && wc.detail().contains("6002 ms"), wc.detail());
            assertEquals(QpState.ERROR, qb.state());
            qa.connect(qb.localEndpoint()); // too late: B rejects
            MemoryRegion ma = t.pa.allocateMemory(64, Access.LOCAL_WRITE);
            assertTrue(qa.postSend(new SendWorkRequest().wrId(2).sge(ma, 0, 8)));
            WorkCompletion late = t.await(t.ca, 1).get(0);
            assertTrue(late.detail().contains("rejected by the peer"), late.detail());
        }
    }

    @Test
    void endpointsOfAnotherFabricOrOfTheQpItselfAreRefusedAtOnce() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair qa = t.qpA(UnaryOperator.identity());
            qa.init();
            VerbsException e = assertThrows(VerbsException.class,
                () -> qa.readyToReceive(new QpEndpoint(new PortAddress("mem", "soft0", 1), 7, 0, 4096)));
            assertTrue(e.getMessage().contains("mem://soft0:1") && e.getMessage().contains("disni"), e.getMessage());
            assertEquals(QpState.INIT, qa.state(), "a refused endpoint leaves the QP as it was");
            e = assertThrows(VerbsException.class, () -> qa.readyToReceive(qa.localEndpoint()));
            assertTrue(e.getMessage().contains("itself"), e.getMessage());
        }
    }

    @Test
    void closingAConnectedQpDisconnectsThePeerAndReleasesEveryNativeObject() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            QueuePair[] qp = t.connected();
            qp[0].close();
            t.runUntil(() -> conn(qp[1]).phase() == QpConnection.Phase.DISCONNECTED);
            qp[1].close();
            SoftSeam.Counters c = t.fx.seam.counters;
            assertEquals(c.qpsCreated, c.qpsDestroyed);
        }
    }
}
