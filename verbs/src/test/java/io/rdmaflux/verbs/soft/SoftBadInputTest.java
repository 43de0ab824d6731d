package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Setup-path bad input: each case throws a {@link VerbsException} naming the value and the fix, and breaks nothing else. */
@ExtendWith(NoLeaksExtension.class)
class SoftBadInputTest {
    private final SoftTwoNodes nodes = SoftTwoNodes.create();
    private final Device da = nodes.a().devices().get(0);
    private final Device db = nodes.b().devices().get(0);
    private final ProtectionDomain pa = da.allocateProtectionDomain();
    private final CompletionQueue ca = da.createCompletionQueue(16);

    @AfterEach
    void close() {
        nodes.close();
    }

    private static void assertMessage(Throwable t, String... parts) {
        for (String p : parts) {
            assertTrue(t.getMessage().contains(p), () -> "message '" + t.getMessage() + "' should mention '" + p + "'");
        }
    }

    @Test
    void queuePairAttributesAreChecked() {
        assertMessage(assertThrows(VerbsException.class, () -> QpInitAttributes.builder(QpType.RC, da.port(1)).build()), "CQ");
        assertMessage(assertThrows(VerbsException.class,
            () -> QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).maxSendWr(0).build()), "maxSendWr", "0");
        assertMessage(assertThrows(VerbsException.class,
            () -> pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).maxInlineBytes(4096).build())),
            "maxInlineBytes", "4096");
        assertMessage(assertThrows(VerbsException.class,
            () -> pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).maxSendWr(1 << 20).build())),
            "maxSendWr", "1048576");
        CompletionQueue foreign = db.createCompletionQueue(4);
        assertMessage(assertThrows(VerbsException.class,
            () -> pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(foreign).build())), "another device");
        assertMessage(assertThrows(VerbsException.class,
            () -> pa.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(ca).build())), db.name());
        assertMessage(assertThrows(VerbsException.class, () -> da.port(2)), "1..1");
    }

    @Test
    void connectingToAnAddressThatDoesNotExistFailsNamingIt() {
        QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).build());
        qa.init();
        PortAddress nowhere = new PortAddress("mem", "nosuchdevice", 1);
        assertMessage(assertThrows(VerbsException.class, () -> qa.readyToReceive(new QpEndpoint(nowhere, 5, 0, 4096))),
            "nosuchdevice");
        assertMessage(assertThrows(VerbsException.class,
            () -> qa.readyToReceive(new QpEndpoint(new PortAddress("mem", db.name(), 9), 5, 0, 4096))), "9");
        assertMessage(assertThrows(VerbsException.class,
            () -> qa.readyToReceive(new QpEndpoint(new PortAddress("net", "10.0.0.1", 7471), 5, 0, 4096))), "mem");
        assertMessage(assertThrows(VerbsException.class, () -> pa.createAddressHandle(da.port(1), nowhere)), "nosuchdevice");
        assertMessage(assertThrows(VerbsException.class, () -> pa.createAddressHandle(db.port(1), db.port(1).address())), db.name());
    }

    @Test
    void malformedWorkRequestsAreRejectedAtPost() {
        QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).build());
        QueuePair qb = db.allocateProtectionDomain().createQueuePair(
            QpInitAttributes.builder(QpType.RC, db.port(1)).cq(db.createCompletionQueue(4)).build());
        qa.connect(qb.localEndpoint());
        MemoryRegion mr = pa.allocateMemory(64, Access.LOCAL_WRITE);
        assertMessage(assertThrows(VerbsException.class, () -> qa.postSend(new SendWorkRequest().sge(mr.address(), -1, mr.lkey()))),
            "negative length", "-1");
        assertMessage(assertThrows(VerbsException.class,
            () -> qa.postReceive(new ReceiveWorkRequest().sge(mr.address(), -2, mr.lkey()))), "negative length", "-2");
        assertMessage(assertThrows(VerbsException.class,
            () -> qa.postSend(new SendWorkRequest().opcode(io.rdmaflux.verbs.WrOpcode.RDMA_READ).inline(true).sge(mr, 0, 8))),
            "RDMA_READ", "inline");
        assertMessage(assertThrows(VerbsException.class, () -> {
            SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i <= SendWorkRequest.MAX_SGE; i++) {
                wr.addSge(mr.address(), 1, mr.lkey());
            }
        }), String.valueOf(SendWorkRequest.MAX_SGE));
        assertEquals(io.rdmaflux.verbs.QpState.RTS, qa.state(), "rejected posts leave the QP as it was");
    }

    @Test
    void providerBuilderRejectsBadCounts() {
        assertMessage(assertThrows(VerbsException.class, () -> SoftProvider.builder().devices(0)), "devices", "0");
        assertMessage(assertThrows(VerbsException.class, () -> SoftProvider.builder().portsPerDevice(17)), "portsPerDevice", "17");
        assertMessage(assertThrows(VerbsException.class, () -> SoftProvider.builder().threadingMode(ThreadingMode.SHARED)), "SHARED");
        assertMessage(assertThrows(VerbsException.class, () -> SoftProvider.builder().name(" ")), "blank");
        assertMessage(assertThrows(VerbsException.class,
            () -> SoftProvider.builder().fabric(nodes.fabric()).deviceNames(java.util.List.of(da.name()))
                .threadingMode(ThreadingMode.INVOKER).build()), da.name(), "unique");
    }
}
