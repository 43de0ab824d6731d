package io.rdmaflux.verbs.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpState;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.SharedReceiveQueue;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The provider TCK: what every verbs provider must do, as an abstract JUnit 5 suite. A provider runs
 * it by extending this class and implementing {@link #createFixture()} (see {@link TckFixture}).
 * Rail-model tests (shaping, latency, seeded faults) live in {@link RailModelTck}.
 *
 * <p>Each test gets a fresh fixture: host A and host B, each with a protection domain and one CQ
 * used for sends and receives. Every test ends with the fixture closed and
 * {@link TckFixture#assertNoLeaks()} passing.
 */
public abstract class ProviderTck {
    /** Upper bound of progress passes any single wait may take. */
    protected static final int MAX_PASSES = 200_000;

    protected TckFixture fx;
    protected Side a;
    protected Side b;

    /** A fresh fixture for one test. */
    protected abstract TckFixture createFixture();

    /** One host's verbs objects. */
    protected static final class Side {
        public final Device device;
        public final ProtectionDomain pd;
        public final CompletionQueue cq;

        Side(Device device) {
            this.device = device;
            this.pd = device.allocateProtectionDomain();
            this.cq = device.createCompletionQueue(4096);
        }

        public QpInitAttributes.Builder attrs(QpType type) {
            return QpInitAttributes.builder(type, device.port(1)).cq(cq);
        }
    }

    @BeforeEach
    void openFixture() {
        fx = createFixture();
        a = new Side(fx.deviceA());
        b = new Side(fx.deviceB());
    }

    @AfterEach
    void closeFixture() {
        if (fx == null) {
            return; // createFixture() skipped the test (a JUnit assumption) or failed
        }
        fx.close();
        fx.assertNoLeaks();
    }

    // ------------------------------------------------------------------ helpers

    protected void runUntil(BooleanSupplier done) {
        for (int i = 0; i < MAX_PASSES; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (fx.progress() == 0) {
                fx.advanceNs(1_000);
            }
        }
        assertTrue(done.getAsBoolean(), "condition not reached within " + MAX_PASSES + " progress passes");
    }

    /** Waits for exactly {@code n} completions on {@code cq}; returns copies. */
    protected List<WorkCompletion> await(CompletionQueue cq, int n) {
        List<WorkCompletion> out = new ArrayList<>();
        runUntil(() -> {
            cq.poll(n - out.size(), wc -> out.add(wc.copy()));
            return out.size() >= n;
        });
        return out;
    }

    /** Drives progress for {@code passes} passes, advancing {@code stepNs} each, and returns whatever completed. */
    protected List<WorkCompletion> drain(CompletionQueue cq, int passes, long stepNs) {
        List<WorkCompletion> out = new ArrayList<>();
        for (int i = 0; i < passes; i++) {
            fx.progress();
            fx.advanceNs(stepNs);
            cq.poll(1024, wc -> out.add(wc.copy()));
        }
        return out;
    }

    protected QueuePair[] rcPair() {
        return rcPair(UnaryOperator.identity());
    }

    protected QueuePair[] rcPair(UnaryOperator<QpInitAttributes.Builder> tweak) {
        QueuePair qa = a.pd.createQueuePair(tweak.apply(a.attrs(QpType.RC)).build());
        QueuePair qb = b.pd.createQueuePair(tweak.apply(b.attrs(QpType.RC)).build());
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        return new QueuePair[] {qa, qb};
    }

    protected static void fill(MemoryRegion mr, long offset, byte[] bytes) {
        mr.buffer().put((int) offset, bytes);
    }

    protected static byte[] read(MemoryRegion mr, long offset, int length) {
        byte[] out = new byte[length];
        mr.buffer().get((int) offset, out);
        return out;
    }

    protected static byte[] pattern(int length, int seed) {
        byte[] p = new byte[length];
        for (int i = 0; i < length; i++) {
            p[i] = (byte) (i * 31 + seed * 7 + (i >>> 8));
        }
        return p;
    }

    protected static void postRecv(QueuePair qp, MemoryRegion mr, long offset, int length, long wrId) {
        assertTrue(qp.postReceive(new ReceiveWorkRequest().wrId(wrId).sge(mr, offset, length)));
    }

    protected static SendWorkRequest send(MemoryRegion mr, long offset, int length, long wrId) {
        return new SendWorkRequest().wrId(wrId).opcode(WrOpcode.SEND).sge(mr, offset, length);
    }

    protected static SendWorkRequest write(MemoryRegion src, long offset, int length, MemoryRegion dst, long dstOffset, long wrId) {
        return new SendWorkRequest().wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sge(src, offset, length)
            .remoteAddress(dst.address() + dstOffset).rkey(dst.rkey());
    }

    private static WorkCompletion only(List<WorkCompletion> wcs) {
        assertEquals(1, wcs.size(), () -> "expected one completion but got " + wcs);
        return wcs.get(0);
    }

    // ------------------------------------------------------------------ SEND / RECV

    @Test
    void sendDeliversBytesExactlyWithImmediateAndLength() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(4096, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(4096, Access.LOCAL_WRITE);
        byte[] data = pattern(1000, 1);
        fill(src, 17, data);
        postRecv(qp[1], dst, 100, 2000, 77);
        assertTrue(qp[0].postSend(send(src, 17, 1000, 5).opcode(WrOpcode.SEND_WITH_IMM).immediate(0xCAFE)));

        WorkCompletion sent = only(await(a.cq, 1));
        assertEquals(WcStatus.SUCCESS, sent.status(), sent::toString);
        assertEquals(WcOpcode.SEND, sent.opcode());
        assertEquals(5, sent.wrId());
        WorkCompletion recv = only(await(b.cq, 1));
        assertEquals(WcStatus.SUCCESS, recv.status(), recv::toString);
        assertEquals(WcOpcode.RECV, recv.opcode());
        assertEquals(77, recv.wrId());
        assertEquals(1000, recv.byteLength());
        assertTrue(recv.hasImmediate());
        assertEquals(0xCAFE, recv.immediate());
        assertEquals(qp[1].qpNumber(), recv.qpNumber());
        assertArrayEquals(data, read(dst, 100, 1000));
        assertArrayEquals(new byte[100], read(dst, 0, 100), "bytes before the receive buffer untouched");
        assertEquals(0, read(dst, 1100, 1)[0], "byte after the message untouched");
    }

    @Test
    void sendGathersSeveralSgesIntoSeveralReceiveSges() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(4096, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(4096, Access.LOCAL_WRITE);
        byte[] data = pattern(3000, 2);
        fill(src, 0, data);
        assertTrue(qp[1].postReceive(new ReceiveWorkRequest().wrId(1)
            .addSge(dst.address(), 700, dst.lkey()).addSge(dst.address() + 1000, 2300, dst.lkey())));
        SendWorkRequest wr = new SendWorkRequest().wrId(2).addSge(src.address(), 1000, src.lkey())
            .addSge(src.address() + 1000, 1500, src.lkey()).addSge(src.address() + 2500, 500, src.lkey());
        assertTrue(qp[0].postSend(wr));
        assertEquals(WcStatus.SUCCESS, only(await(a.cq, 1)).status());
        WorkCompletion recv = only(await(b.cq, 1));
        assertEquals(3000, recv.byteLength());
        byte[] got = new byte[3000];
        System.arraycopy(read(dst, 0, 700), 0, got, 0, 700);
        System.arraycopy(read(dst, 1000, 2300), 0, got, 700, 2300);
        assertArrayEquals(data, got);
    }

    @Test
    void aGatherPostedBehindOneSgeSendsStillInFlightKeepsThemAll() {
        // the soft provider's send ring starts with one SGE per slot and grows at the first gather
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(8192, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(8192, Access.LOCAL_WRITE);
        for (int i = 0; i < 6; i++) {
            fill(src, i * 1024L, pattern(1024, 10 + i));
            postRecv(qp[1], dst, i * 1024L, 1024, 100 + i);
        }
        assertTrue(qp[0].postSend(send(src, 0, 1024, 0)));
        assertTrue(qp[0].postSend(send(src, 1024, 1024, 1)));
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(2).addSge(src.address() + 2048, 300, src.lkey())
            .addSge(src.address() + 2348, 400, src.lkey()).addSge(src.address() + 2748, 324, src.lkey())));
        for (int i = 3; i < 6; i++) {
            assertTrue(qp[0].postSend(send(src, i * 1024L, 1024, i)));
        }
        List<WorkCompletion> sends = await(a.cq, 6);
        List<WorkCompletion> recvs = await(b.cq, 6);
        for (int i = 0; i < 6; i++) {
            assertEquals(WcStatus.SUCCESS, sends.get(i).status());
            assertEquals(1024, recvs.get(i).byteLength());
            assertArrayEquals(pattern(1024, 10 + i), read(dst, i * 1024L, 1024), "message " + i);
        }
    }

    @Test
    void sendsArriveAndCompleteInPostingOrder() {
        QueuePair[] qp = rcPair();
        int n = 200;
        MemoryRegion src = a.pd.allocateMemory(n * 64L, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(n * 64L, Access.LOCAL_WRITE);
        for (int i = 0; i < n; i++) {
            fill(src, i * 64L, pattern(64, i));
            postRecv(qp[1], dst, i * 64L, 64, 1000 + i);
        }
        for (int i = 0; i < n; i++) {
            assertTrue(qp[0].postSend(send(src, i * 64L, 64, i)));
        }
        List<WorkCompletion> sends = await(a.cq, n);
        List<WorkCompletion> recvs = await(b.cq, n);
        for (int i = 0; i < n; i++) {
            assertEquals(i, sends.get(i).wrId());
            assertEquals(WcStatus.SUCCESS, sends.get(i).status());
            assertEquals(1000 + i, recvs.get(i).wrId());
            assertArrayEquals(pattern(64, i), read(dst, i * 64L, 64), "message " + i);
        }
    }

    @Test
    void zeroLengthSendCompletesWithZeroBytes() {
        QueuePair[] qp = rcPair();
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE);
        postRecv(qp[1], dst, 0, 64, 1);
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(9).opcode(WrOpcode.SEND_WITH_IMM).immediate(3)));
        assertEquals(WcStatus.SUCCESS, only(await(a.cq, 1)).status());
        WorkCompletion r = only(await(b.cq, 1));
        assertEquals(0, r.byteLength());
        assertEquals(3, r.immediate());
    }

    // ------------------------------------------------------------------ RDMA

    @Test
    void rdmaWriteCopiesIntoTargetRegionWithoutReceiveCompletion() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(1 << 16, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(1 << 17, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        byte[] data = pattern(1 << 16, 3);
        fill(src, 0, data);
        assertTrue(qp[0].postSend(write(src, 0, 1 << 16, dst, 4096, 11)));
        WorkCompletion wc = only(await(a.cq, 1));
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(WcOpcode.RDMA_WRITE, wc.opcode());
        assertArrayEquals(data, read(dst, 4096, 1 << 16));
        assertEquals(0, drain(b.cq, 20, 1_000).size(), "RDMA WRITE consumes no receive");
    }

    @Test
    void rdmaWriteWithImmediateConsumesAReceive() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(256, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(256, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        fill(src, 0, pattern(256, 4));
        postRecv(qp[1], dst, 0, 0, 21);
        assertTrue(qp[0].postSend(write(src, 0, 256, dst, 0, 12).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immediate(0x1234)));
        assertEquals(WcStatus.SUCCESS, only(await(a.cq, 1)).status());
        WorkCompletion r = only(await(b.cq, 1));
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, r.opcode());
        assertEquals(0x1234, r.immediate());
        assertEquals(21, r.wrId());
        assertArrayEquals(pattern(256, 4), read(dst, 0, 256));
    }

    @Test
    void rdmaReadFetchesRemoteBytesIntoLocalSges() {
        QueuePair[] qp = rcPair();
        MemoryRegion local = a.pd.allocateMemory(8192, Access.LOCAL_WRITE);
        MemoryRegion remote = b.pd.allocateMemory(8192, Access.REMOTE_READ);
        byte[] data = pattern(5000, 5);
        fill(remote, 1000, data);
        SendWorkRequest wr = new SendWorkRequest().wrId(31).opcode(WrOpcode.RDMA_READ)
            .addSge(local.address(), 2000, local.lkey()).addSge(local.address() + 4000, 3000, local.lkey())
            .remoteAddress(remote.address() + 1000).rkey(remote.rkey());
        assertTrue(qp[0].postSend(wr));
        WorkCompletion wc = only(await(a.cq, 1));
        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(WcOpcode.RDMA_READ, wc.opcode());
        assertEquals(5000, wc.byteLength());
        byte[] got = new byte[5000];
        System.arraycopy(read(local, 0, 2000), 0, got, 0, 2000);
        System.arraycopy(read(local, 4000, 3000), 0, got, 2000, 3000);
        assertArrayEquals(data, got);
    }

    @Test
    void mixedOperationsCompleteInPostingOrder() {
        QueuePair[] qp = rcPair();
        MemoryRegion la = a.pd.allocateMemory(4096, Access.LOCAL_WRITE);
        MemoryRegion rb = b.pd.allocateMemory(4096, Access.ALL);
        fill(rb, 2048, pattern(100, 6));
        fill(la, 0, pattern(100, 7));
        postRecv(qp[1], rb, 0, 100, 1);
        assertTrue(qp[0].postSend(write(la, 0, 100, rb, 1024, 1)));
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.RDMA_READ).sge(la, 1024, 100)
            .remoteAddress(rb.address() + 2048).rkey(rb.rkey())));
        assertTrue(qp[0].postSend(send(la, 0, 100, 3)));
        List<WorkCompletion> wcs = await(a.cq, 3);
        assertEquals(List.of(1L, 2L, 3L), wcs.stream().map(WorkCompletion::wrId).toList());
        assertEquals(List.of(WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ, WcOpcode.SEND), wcs.stream().map(WorkCompletion::opcode).toList());
        assertArrayEquals(pattern(100, 6), read(la, 1024, 100));
        assertArrayEquals(pattern(100, 7), read(rb, 1024, 100));
        assertEquals(WcStatus.SUCCESS, only(await(b.cq, 1)).status());
    }

    // ------------------------------------------------------------------ atomics (cases in AtomicCases)

    private AtomicCases atomics() {
        assumeTrue(a.device.capabilities().atomics(), "provider has no atomics");
        return new AtomicCases(this);
    }

    @Test
    void atomicFetchAndAddFromTwoQueuePairsGivesTheExactSum() {
        atomics().fetchAndAddFromTwoQueuePairsGivesTheExactSum();
    }

    @Test
    void atomicCompareAndSwapReturnsTheOldValueOnSuccessAndFailure() {
        atomics().compareAndSwapReturnsTheOldValueOnSuccessAndFailure();
    }

    @Test
    void misalignedAtomicCompletesWithALocalErrorAndIsNotSent() {
        atomics().misalignedAtomicCompletesWithALocalErrorAndIsNotSent();
    }

    @Test
    void atomicWithAnSgeOtherThanEightBytesCompletesWithALengthError() {
        atomics().atomicWithAnSgeOtherThanEightBytesCompletesWithALengthError();
    }

    @Test
    void atomicOutsideTheRegionFailsWithRemoteAccessError() {
        atomics().atomicOutsideTheRegionFailsWithRemoteAccessError();
    }

    @Test
    void atomicWithoutRemoteAtomicAccessFailsWithRemoteAccessError() {
        atomics().atomicWithoutRemoteAtomicAccessFailsWithRemoteAccessError();
    }

    @Test
    void atomicOnADeregisteredRegionFailsWithRemoteAccessError() {
        atomics().atomicOnADeregisteredRegionFailsWithRemoteAccessError();
    }

    @Test
    void atomicsOnADeviceWithoutThemAreRefusedAtPost() {
        assumeTrue(!a.device.capabilities().atomics(), "provider has atomics");
        new AtomicCases(this).atomicsOnADeviceWithoutThemAreRefusedAtPost();
    }

    // ------------------------------------------------------------------ remote errors

    private void assertRemoteAccessError(SendWorkRequest wr, QueuePair requester) {
        assertTrue(requester.postSend(wr));
        WorkCompletion wc = only(await(a.cq, 1));
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
        assertFalse(wc.detail().isEmpty(), "error completions say why");
        runUntil(() -> requester.state() == QpState.ERROR);
    }

    @Test
    void writeWithWrongRkeyFailsWithRemoteAccessErrorAndLeavesMemoryUntouched() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        fill(src, 0, pattern(64, 1));
        assertRemoteAccessError(write(src, 0, 64, dst, 0, 1).rkey(dst.rkey() ^ 0x7F00), qp[0]);
        assertArrayEquals(new byte[64], read(dst, 0, 64));
    }

    @Test
    void writeOutOfBoundsFailsWithRemoteAccessError() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(128, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        assertRemoteAccessError(write(src, 0, 65, dst, 0, 1), qp[0]);
    }

    @Test
    void writeWithoutRemoteWriteAccessFailsWithRemoteAccessError() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_READ);
        assertRemoteAccessError(write(src, 0, 64, dst, 0, 1), qp[0]);
    }

    @Test
    void readWithoutRemoteReadAccessFailsWithRemoteAccessError() {
        QueuePair[] qp = rcPair();
        MemoryRegion local = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion remote = b.pd.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        assertRemoteAccessError(new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_READ).sge(local, 0, 64)
            .remoteAddress(remote.address()).rkey(remote.rkey()), qp[0]);
    }

    @Test
    void deregisteredRegionRejectsRemoteAccess() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        SendWorkRequest wr = write(src, 0, 64, dst, 0, 1);
        dst.deregister();
        assertFalse(dst.isValid());
        assertRemoteAccessError(wr, qp[0]);
    }

    @Test
    void receiveTooSmallFailsBothSides() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(256, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(256, Access.LOCAL_WRITE);
        postRecv(qp[1], dst, 0, 100, 1);
        assertTrue(qp[0].postSend(send(src, 0, 200, 2)));
        WorkCompletion r = only(await(b.cq, 1));
        assertEquals(WcStatus.LOC_LEN_ERR, r.status(), r::toString);
        WorkCompletion s = only(await(a.cq, 1));
        assertEquals(WcStatus.REM_INV_REQ_ERR, s.status(), s::toString);
    }

    @Test
    void receiveWithBadLkeyFailsLocallyAndTheSenderGetsRemoteOperationError() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE);
        assertTrue(qp[1].postReceive(new ReceiveWorkRequest().wrId(1).sge(dst.address(), 64, dst.lkey() + 0x100)));
        assertTrue(qp[0].postSend(send(src, 0, 64, 2)));
        WorkCompletion r = only(await(b.cq, 1));
        assertEquals(WcStatus.LOC_PROT_ERR, r.status(), r::toString);
        WorkCompletion s = only(await(a.cq, 1));
        assertEquals(WcStatus.REM_OP_ERR, s.status(), s::toString);
    }

    // ------------------------------------------------------------------ local errors

    @Test
    void sgeOutsideItsRegionFailsWithLocalProtectionError() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(256, Access.LOCAL_WRITE);
        postRecv(qp[1], dst, 0, 256, 1);
        assertTrue(qp[0].postSend(send(src, 32, 64, 5)));
        WorkCompletion wc = only(await(a.cq, 1));
        assertEquals(WcStatus.LOC_PROT_ERR, wc.status(), wc::toString);
        assertTrue(wc.detail().contains("outside"), wc::detail);
        runUntil(() -> qp[0].state() == QpState.ERROR);
    }

    @Test
    void wrongLkeyFailsWithLocalProtectionError() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(1).sge(src.address(), 64, src.lkey() + 0x100)));
        assertEquals(WcStatus.LOC_PROT_ERR, only(await(a.cq, 1)).status());
    }

    @Test
    void readIntoRegionWithoutLocalWriteFailsWithLocalProtectionError() {
        QueuePair[] qp = rcPair();
        MemoryRegion local = a.pd.allocateMemory(64, 0);
        MemoryRegion remote = b.pd.allocateMemory(64, Access.REMOTE_READ);
        assertTrue(qp[0].postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_READ).sge(local, 0, 64)
            .remoteAddress(remote.address()).rkey(remote.rkey())));
        assertEquals(WcStatus.LOC_PROT_ERR, only(await(a.cq, 1)).status());
    }

    @Test
    void regionFromAnotherProtectionDomainIsRejected() {
        QueuePair[] qp = rcPair();
        ProtectionDomain other = a.device.allocateProtectionDomain();
        MemoryRegion foreign = other.allocateMemory(64, Access.LOCAL_WRITE);
        assertTrue(qp[0].postSend(send(foreign, 0, 64, 1)));
        assertEquals(WcStatus.LOC_PROT_ERR, only(await(a.cq, 1)).status());
        other.close();
    }

    // ------------------------------------------------------------------ RNR and flush

    @Test
    void sendWithoutReceiveIsRetriedUntilAReceiveIsPosted() {
        QueuePair[] qp = rcPair(b -> b.rnrRetryCount(7).rnrTimeoutNs(10_000));
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE);
        fill(src, 0, pattern(64, 9));
        assertTrue(qp[0].postSend(send(src, 0, 64, 1)));
        assertTrue(qp[0].postSend(send(src, 0, 32, 2)));
        assertEquals(0, drain(a.cq, 50, 5_000).size(), "no completion while the receiver is not ready");
        postRecv(qp[1], dst, 0, 64, 10);
        postRecv(qp[1], dst, 0, 64, 11);
        List<WorkCompletion> wcs = await(a.cq, 2);
        assertEquals(WcStatus.SUCCESS, wcs.get(0).status());
        assertEquals(WcStatus.SUCCESS, wcs.get(1).status());
        List<WorkCompletion> recvs = await(b.cq, 2);
        assertEquals(List.of(64, 32), recvs.stream().map(WorkCompletion::byteLength).toList(), "delivered once each, in order");
    }

    @Test
    void rnrRetriesExhaustedFailWithRnrRetryExceeded() {
        QueuePair[] qp = rcPair(b -> b.rnrRetryCount(2).rnrTimeoutNs(10_000));
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        assertTrue(qp[0].postSend(send(src, 0, 64, 1)));
        assertTrue(qp[0].postSend(send(src, 0, 64, 2)));
        List<WorkCompletion> wcs = await(a.cq, 2);
        assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wcs.get(0).status(), wcs.get(0)::toString);
        assertEquals(WcStatus.WR_FLUSH_ERR, wcs.get(1).status());
        assertEquals(QpState.ERROR, qp[0].state());
    }

    @Test
    void errorStateFlushesOutstandingAndNewWorkRequests() {
        QueuePair[] qp = rcPair();
        MemoryRegion mr = b.pd.allocateMemory(256, Access.LOCAL_WRITE);
        postRecv(qp[1], mr, 0, 64, 1);
        postRecv(qp[1], mr, 64, 64, 2);
        qp[1].toError();
        assertEquals(QpState.ERROR, qp[1].state());
        postRecv(qp[1], mr, 128, 64, 3);
        assertTrue(qp[1].postSend(send(mr, 0, 8, 4).signaled(false)));
        List<WorkCompletion> wcs = await(b.cq, 4);
        for (WorkCompletion wc : wcs) {
            assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(), wc::toString);
        }
        assertEquals(List.of(1L, 2L, 3L), wcs.stream().filter(w -> w.opcode() == WcOpcode.RECV).map(WorkCompletion::wrId).toList());
        assertTrue(wcs.stream().anyMatch(w -> w.wrId() == 4 && w.opcode() == WcOpcode.SEND));
    }

    @Test
    void sendToPeerInErrorFailsAfterRetries() {
        QueuePair[] qp = rcPair(b -> b.retryCount(2).retryTimeoutNs(50_000));
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        qp[1].toError();
        assertTrue(qp[0].postSend(send(src, 0, 64, 1)));
        WorkCompletion wc = only(await(a.cq, 1));
        assertEquals(WcStatus.RETRY_EXC_ERR, wc.status(), wc::toString);
    }

    // ------------------------------------------------------------------ signaling, inline, limits

    @Test
    void unsignaledSendsCompleteSilentlyAndASignaledOneReportsThem() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64 * 10, Access.LOCAL_WRITE);
        for (int i = 0; i < 10; i++) {
            postRecv(qp[1], dst, i * 64L, 64, i);
        }
        for (int i = 0; i < 9; i++) {
            assertTrue(qp[0].postSend(send(src, 0, 64, i).signaled(false)));
        }
        assertTrue(qp[0].postSend(send(src, 0, 64, 9)));
        WorkCompletion wc = only(await(a.cq, 1));
        assertEquals(9, wc.wrId());
        assertEquals(10, await(b.cq, 10).size());
    }

    @Test
    void unsignaledSendThatFailsStillProducesACompletion() {
        QueuePair[] qp = rcPair();
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        assertTrue(qp[0].postSend(send(src, 0, 128, 1).signaled(false)));
        assertEquals(WcStatus.LOC_PROT_ERR, only(await(a.cq, 1)).status());
    }

    @Test
    void inlineSendCopiesThePayloadAtPostTime() {
        QueuePair[] qp = rcPair(b -> b.maxInlineBytes(128));
        MemoryRegion src = a.pd.allocateMemory(128, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(128, Access.LOCAL_WRITE);
        fill(src, 0, pattern(100, 1));
        postRecv(qp[1], dst, 0, 128, 1);
        assertTrue(qp[0].postSend(send(src, 0, 100, 1).inline(true)));
        fill(src, 0, pattern(100, 2));
        await(a.cq, 1);
        assertEquals(100, only(await(b.cq, 1)).byteLength());
        assertArrayEquals(pattern(100, 1), read(dst, 0, 100));
    }

    @Test
    void inlinePayloadAboveTheQpLimitIsRejected() {
        QueuePair[] qp = rcPair(b -> b.maxInlineBytes(64));
        MemoryRegion src = a.pd.allocateMemory(128, Access.LOCAL_WRITE);
        VerbsException e = assertThrows(VerbsException.class, () -> qp[0].postSend(send(src, 0, 65, 1).inline(true)));
        assertTrue(e.getMessage().contains("65") && e.getMessage().contains("maxInlineBytes"), e.getMessage());
    }

    @Test
    void fullSendQueueRefusesThePostUntilCompletionsArePolled() {
        QueuePair[] qp = rcPair(b -> b.maxSendWr(4));
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64 * 8, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        for (int i = 0; i < 4; i++) {
            assertTrue(qp[0].postSend(write(src, 0, 64, dst, i * 64L, i)));
        }
        assertFalse(qp[0].postSend(write(src, 0, 64, dst, 0, 4)));
        await(a.cq, 4);
        assertTrue(qp[0].postSend(write(src, 0, 64, dst, 0, 4)));
        await(a.cq, 1);
    }

    @Test
    void fullReceiveQueueRefusesThePost() {
        QueuePair[] qp = rcPair(b -> b.maxReceiveWr(2));
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE);
        postRecv(qp[1], dst, 0, 64, 1);
        postRecv(qp[1], dst, 0, 64, 2);
        assertFalse(qp[1].postReceive(new ReceiveWorkRequest().wrId(3).sge(dst, 0, 64)));
    }

    @Test
    void completionQueueOverrunMovesItsQueuePairsToError() {
        CompletionQueue small = a.device.createCompletionQueue(2);
        QueuePair qa = a.pd.createQueuePair(QpInitAttributes.builder(QpType.RC, a.device.port(1)).cq(small).build());
        QueuePair qb = b.pd.createQueuePair(b.attrs(QpType.RC).build());
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        for (int i = 0; i < 4; i++) {
            assertTrue(qa.postSend(write(src, 0, 64, dst, 0, i)));
        }
        runUntil(() -> qa.state() == QpState.ERROR);
        List<WorkCompletion> wcs = new ArrayList<>();
        runUntil(() -> {
            small.poll(10, wc -> wcs.add(wc.copy()));
            return wcs.size() >= 4;
        });
        assertEquals(List.of(0L, 1L, 2L, 3L), wcs.stream().map(WorkCompletion::wrId).toList(), "no completion lost");
        small.close();
    }

    // ------------------------------------------------------------------ state machine and bad input

    @Test
    void stateMachineFollowsResetInitRtrRts() {
        QueuePair qa = a.pd.createQueuePair(a.attrs(QpType.RC).build());
        QueuePair qb = b.pd.createQueuePair(b.attrs(QpType.RC).build());
        assertEquals(QpState.RESET, qa.state());
        assertThrows(VerbsException.class, () -> qa.readyToReceive(qb.localEndpoint()));
        assertThrows(VerbsException.class, qa::readyToSend);
        qa.init();
        assertEquals(QpState.INIT, qa.state());
        assertThrows(VerbsException.class, qa::init);
        assertThrows(VerbsException.class, qa::readyToReceive, "RC needs a remote endpoint");
        qa.readyToReceive(qb.localEndpoint());
        assertEquals(QpState.RTR, qa.state());
        qa.readyToSend();
        assertEquals(QpState.RTS, qa.state());
        qa.toError();
        assertEquals(QpState.ERROR, qa.state());
    }

    @Test
    void postingInTheWrongStateThrowsNamingTheState() {
        QueuePair qa = a.pd.createQueuePair(a.attrs(QpType.RC).build());
        QueuePair qb = b.pd.createQueuePair(b.attrs(QpType.RC).build());
        MemoryRegion mr = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        VerbsException e = assertThrows(VerbsException.class, () -> qa.postReceive(new ReceiveWorkRequest().sge(mr, 0, 64)));
        assertTrue(e.getMessage().contains("RESET"), e.getMessage());
        qa.init();
        assertTrue(qa.postReceive(new ReceiveWorkRequest().sge(mr, 0, 64)), "receives may be posted from INIT");
        e = assertThrows(VerbsException.class, () -> qa.postSend(send(mr, 0, 8, 1)));
        assertTrue(e.getMessage().contains("INIT") && e.getMessage().contains("RTS"), e.getMessage());
        qa.readyToReceive(qb.localEndpoint());
        assertThrows(VerbsException.class, () -> qa.postSend(send(mr, 0, 8, 1)));
    }

    @Test
    void useAfterCloseThrows() {
        QueuePair[] qp = rcPair();
        MemoryRegion mr = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        qp[0].close();
        qp[0].close();
        VerbsException e = assertThrows(VerbsException.class, () -> qp[0].postSend(send(mr, 0, 8, 1)));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        CompletionQueue cq = a.device.createCompletionQueue(4);
        cq.close();
        assertThrows(VerbsException.class, () -> cq.poll(1, wc -> { }));
        ProtectionDomain pd = a.device.allocateProtectionDomain();
        pd.close();
        assertThrows(VerbsException.class, () -> pd.allocateMemory(64, 0));
        mr.deregister();
        mr.deregister();
        assertThrows(VerbsException.class, mr::buffer);
    }

    @Test
    void badRegistrationsAreRejectedWithTheValueInTheMessage() {
        assertThrows(VerbsException.class, () -> a.pd.registerMemory(ByteBuffer.allocate(64), Access.LOCAL_WRITE));
        assertThrows(VerbsException.class, () -> a.pd.registerMemory(ByteBuffer.allocateDirect(0), Access.LOCAL_WRITE));
        assertThrows(VerbsException.class, () -> a.pd.allocateMemory(64, Access.REMOTE_WRITE));
        VerbsException e = assertThrows(VerbsException.class, () -> a.pd.allocateMemory(0, Access.LOCAL_WRITE));
        assertTrue(e.getMessage().contains("0"), e.getMessage());
        assertThrows(VerbsException.class, () -> a.device.createCompletionQueue(0));
    }

    @Test
    void registeredCallerMemoryCoversPositionToLimitAndStaysTheCallers() {
        ByteBuffer buf = ByteBuffer.allocateDirect(1024);
        buf.position(100).limit(300);
        MemoryRegion mr = a.pd.registerMemory(buf, Access.LOCAL_WRITE);
        assertEquals(200, mr.length());
        mr.buffer().put(0, (byte) 42);
        assertEquals(42, buf.get(100));
        mr.deregister();
        buf.put(100, (byte) 1);
        assertEquals(1, buf.get(100), "caller memory stays usable after deregistration");
    }

    // ------------------------------------------------------------------ UD

    protected QueuePair udQp(Side s, UnaryOperator<QpInitAttributes.Builder> tweak) {
        QueuePair qp = s.pd.createQueuePair(tweak.apply(s.attrs(QpType.UD)).build());
        qp.init();
        qp.readyToReceive();
        qp.readyToSend();
        return qp;
    }

    @Test
    void udDatagramCarriesPayloadImmediateAndSourceQpn() {
        assumeTrue(a.device.capabilities().unreliableDatagram(), "provider has no UD");
        QueuePair qa = udQp(a, UnaryOperator.identity());
        QueuePair qb = udQp(b, UnaryOperator.identity());
        MemoryRegion src = a.pd.allocateMemory(4096, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(4096, Access.LOCAL_WRITE);
        fill(src, 0, pattern(1500, 3));
        postRecv(qb, dst, 0, 4096, 8);
        AddressHandle ah = a.pd.createAddressHandle(a.device.port(1), b.device.port(1).address());
        assertTrue(qa.postSend(send(src, 0, 1500, 1).opcode(WrOpcode.SEND_WITH_IMM).immediate(77)
            .ud(ah, qb.qpNumber(), qb.attributes().qkey())));
        assertEquals(WcStatus.SUCCESS, only(await(a.cq, 1)).status());
        WorkCompletion r = only(await(b.cq, 1));
        assertEquals(WcStatus.SUCCESS, r.status());
        assertEquals(1500, r.byteLength());
        assertEquals(qa.qpNumber(), r.sourceQpn());
        assertEquals(77, r.immediate());
        assertArrayEquals(pattern(1500, 3), read(dst, 0, 1500));
    }

    @Test
    void udDatagramAboveTheMtuFailsWithLocalLengthError() {
        assumeTrue(a.device.capabilities().unreliableDatagram(), "provider has no UD");
        QueuePair qa = udQp(a, UnaryOperator.identity());
        QueuePair qb = udQp(b, UnaryOperator.identity());
        int mtu = a.device.port(1).mtuBytes();
        MemoryRegion src = a.pd.allocateMemory(mtu + 1, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(8192, Access.LOCAL_WRITE);
        postRecv(qb, dst, 0, 8192, 8);
        AddressHandle ah = a.pd.createAddressHandle(a.device.port(1), b.device.port(1).address());
        assertTrue(qa.postSend(send(src, 0, mtu + 1, 1).ud(ah, qb.qpNumber(), qb.attributes().qkey())));
        assertTrue(qa.postSend(send(src, 0, mtu, 2).ud(ah, qb.qpNumber(), qb.attributes().qkey())));
        List<WorkCompletion> wcs = await(a.cq, 2);
        assertEquals(WcStatus.LOC_LEN_ERR, wcs.get(0).status());
        assertTrue(wcs.get(0).detail().contains(String.valueOf(mtu)), wcs.get(0)::detail);
        assertEquals(WcStatus.SUCCESS, wcs.get(1).status(), "the QP stays usable");
        assertEquals(mtu, only(await(b.cq, 1)).byteLength());
    }

    @Test
    void udDatagramWithoutPostedReceiveIsDroppedSilently() {
        assumeTrue(a.device.capabilities().unreliableDatagram(), "provider has no UD");
        QueuePair qa = udQp(a, UnaryOperator.identity());
        QueuePair qb = udQp(b, UnaryOperator.identity());
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE);
        AddressHandle ah = a.pd.createAddressHandle(a.device.port(1), b.device.port(1).address());
        fill(src, 0, pattern(64, 1));
        assertTrue(qa.postSend(send(src, 0, 64, 1).ud(ah, qb.qpNumber(), qb.attributes().qkey())));
        assertEquals(WcStatus.SUCCESS, only(await(a.cq, 1)).status(), "the sender never knows");
        assertEquals(0, drain(b.cq, 20, 1_000).size());
        fill(src, 0, pattern(64, 2));
        postRecv(qb, dst, 0, 64, 5);
        assertTrue(qa.postSend(send(src, 0, 64, 2).ud(ah, qb.qpNumber(), qb.attributes().qkey())));
        assertEquals(5, only(await(b.cq, 1)).wrId());
        assertArrayEquals(pattern(64, 2), read(dst, 0, 64), "the later datagram, not the dropped one");
    }

    @Test
    void udDatagramWithWrongQkeyIsDropped() {
        assumeTrue(a.device.capabilities().unreliableDatagram(), "provider has no UD");
        QueuePair qa = udQp(a, UnaryOperator.identity());
        QueuePair qb = udQp(b, x -> x.qkey(0x42));
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(64, Access.LOCAL_WRITE);
        postRecv(qb, dst, 0, 64, 5);
        AddressHandle ah = a.pd.createAddressHandle(a.device.port(1), b.device.port(1).address());
        assertTrue(qa.postSend(send(src, 0, 64, 1).ud(ah, qb.qpNumber(), 0x43)));
        await(a.cq, 1);
        assertEquals(0, drain(b.cq, 20, 1_000).size());
    }

    @Test
    void udRejectsRdmaOpcodesAndMissingAddressHandle() {
        assumeTrue(a.device.capabilities().unreliableDatagram(), "provider has no UD");
        QueuePair qa = udQp(a, UnaryOperator.identity());
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        assertThrows(VerbsException.class, () -> qa.postSend(write(src, 0, 8, src, 0, 1)));
        VerbsException e = assertThrows(VerbsException.class, () -> qa.postSend(send(src, 0, 8, 1)));
        assertTrue(e.getMessage().contains("ud("), e.getMessage());
    }

    // ------------------------------------------------------------------ SRQ

    @Test
    void sharedReceiveQueueFeedsSeveralQueuePairsInPostingOrder() {
        assumeTrue(b.device.capabilities().sharedReceiveQueue(), "provider has no SRQ");
        SharedReceiveQueue srq = b.pd.createSharedReceiveQueue(16);
        QueuePair a1 = a.pd.createQueuePair(a.attrs(QpType.RC).build());
        QueuePair a2 = a.pd.createQueuePair(a.attrs(QpType.RC).build());
        QueuePair b1 = b.pd.createQueuePair(b.attrs(QpType.RC).srq(srq).build());
        QueuePair b2 = b.pd.createQueuePair(b.attrs(QpType.RC).srq(srq).build());
        a1.connect(b1.localEndpoint());
        b1.connect(a1.localEndpoint());
        a2.connect(b2.localEndpoint());
        b2.connect(a2.localEndpoint());
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(256, Access.LOCAL_WRITE);
        for (int i = 0; i < 3; i++) {
            assertTrue(srq.postReceive(new ReceiveWorkRequest().wrId(100 + i).sge(dst, i * 64L, 64)));
        }
        assertEquals(3, srq.outstanding());
        assertThrows(VerbsException.class, () -> b1.postReceive(new ReceiveWorkRequest().sge(dst, 0, 8)));
        assertTrue(a1.postSend(send(src, 0, 10, 1)));
        await(a.cq, 1);
        assertTrue(a2.postSend(send(src, 0, 20, 2)));
        await(a.cq, 1);
        assertTrue(a1.postSend(send(src, 0, 30, 3)));
        await(a.cq, 1);
        List<WorkCompletion> r = await(b.cq, 3);
        assertEquals(List.of(100L, 101L, 102L), r.stream().map(WorkCompletion::wrId).toList());
        assertEquals(List.of(b1.qpNumber(), b2.qpNumber(), b1.qpNumber()), r.stream().map(WorkCompletion::qpNumber).toList());
        assertEquals(0, srq.outstanding());
    }

    // ------------------------------------------------------------------ port state

    @Test
    void portDownFailsRcWithRetryExceededAndDropsUd() {
        assumeTrue(fx.canSetPortState(), "fixture cannot change port state");
        QueuePair[] qp = rcPair(b -> b.retryCount(3).retryTimeoutNs(100_000));
        QueuePair ua = udQp(a, UnaryOperator.identity());
        QueuePair ub = udQp(b, UnaryOperator.identity());
        MemoryRegion src = a.pd.allocateMemory(64, Access.LOCAL_WRITE);
        MemoryRegion dst = b.pd.allocateMemory(128, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        postRecv(ub, dst, 64, 64, 9);
        AddressHandle ah = a.pd.createAddressHandle(a.device.port(1), b.device.port(1).address());
        fx.setPortState(a.device.port(1), PortState.DOWN);
        long start = fx.nowNs();
        assertTrue(ua.postSend(send(src, 0, 64, 1).ud(ah, ub.qpNumber(), ub.attributes().qkey())));
        assertTrue(qp[0].postSend(write(src, 0, 64, dst, 0, 2)));
        List<WorkCompletion> wcs = await(a.cq, 2);
        WorkCompletion rc = wcs.stream().filter(w -> w.wrId() == 2).findFirst().orElseThrow();
        assertEquals(WcStatus.RETRY_EXC_ERR, rc.status(), rc::toString);
        assertEquals(QpState.ERROR, qp[0].state());
        if (fx.virtualTime()) {
            assertTrue(fx.nowNs() - start >= 4 * 100_000L, "fails only after retryCount+1 timeouts");
        }
        assertEquals(0, drain(b.cq, 10, 1_000).size(), "the UD datagram was dropped");
        fx.setPortState(a.device.port(1), PortState.ACTIVE);
        assertTrue(ua.postSend(send(src, 0, 64, 3).ud(ah, ub.qpNumber(), ub.attributes().qkey())));
        assertEquals(9, only(await(b.cq, 1)).wrId(), "UD flows again once the port is up");
    }
}
