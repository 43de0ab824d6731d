package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NoLeaksExtension.class)
class SoftConnectionManagerTest {
    private final SoftTwoNodes nodes = SoftTwoNodes.create();

    @AfterEach
    void close() {
        nodes.close();
    }

    private Throwable failure(CompletableFuture<?> f) {
        assertTrue(f.isCompletedExceptionally(), "expected a failed future");
        return assertThrows(ExecutionException.class, f::get).getCause();
    }

    @Test
    void connectRequestReachesListenerAndBothSidesExchangeEndpoints() {
        Device db = nodes.b().devices().get(0);
        ProtectionDomain pdb = db.allocateProtectionDomain();
        CompletionQueue cqb = db.createCompletionQueue(16);
        QueuePair[] serverQp = new QueuePair[1];
        ConnectionManager.Listener listener = nodes.b().connectionManager().listen(new PortAddress("mem", db.name(), 0), (from, req) -> {
            QueuePair qp = pdb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cqb).build());
            qp.connect(req.endpoints().get(0));
            serverQp[0] = qp;
            return CompletableFuture.completedFuture(new CmParams(List.of(qp.localEndpoint()), "hi".getBytes()));
        });
        assertTrue(listener.address().port() > 0, "service 0 asks for a free one");
        assertTrue(nodes.fabric().isListening(listener.address()));

        Device da = nodes.a().devices().get(0);
        ProtectionDomain pda = da.allocateProtectionDomain();
        CompletionQueue cqa = da.createCompletionQueue(16);
        QueuePair qa = pda.createQueuePair(SoftTwoNodes.rc(nodes.a(), cqa).build());
        CompletableFuture<CmParams> reply = nodes.a().connectionManager().connect(listener.address(),
            new CmParams(List.of(qa.localEndpoint()), new byte[0]), 1_000_000);
        CmParams accepted = reply.join();
        assertArrayEquals("hi".getBytes(), accepted.privateData());
        qa.connect(accepted.endpoints().get(0));

        MemoryRegion src = pda.allocateMemory(8, Access.LOCAL_WRITE);
        MemoryRegion dst = pdb.allocateMemory(8, Access.LOCAL_WRITE);
        serverQp[0].postReceive(new ReceiveWorkRequest().wrId(1).sge(dst, 0, 8));
        qa.postSend(new SendWorkRequest().wrId(2).sge(src, 0, 8));
        List<WorkCompletion> r = nodes.awaitCompletions(cqb, 1);
        assertTrue(r.get(0).isSuccess());
        listener.close();
        assertFalse(nodes.fabric().isListening(listener.address()));
    }

    @Test
    void connectWithNobodyListeningIsRefused() {
        PortAddress nowhere = new PortAddress("mem", nodes.b().devices().get(0).name(), 4242);
        Throwable t = failure(nodes.a().connectionManager().connect(nowhere, params(), 1_000));
        assertTrue(t.getMessage().contains("refused") && t.getMessage().contains(nowhere.toString()), t.getMessage());
    }

    @Test
    void rejectionReachesTheRequesterWithItsReason() {
        PortAddress at = new PortAddress("mem", nodes.b().devices().get(0).name(), 7000);
        nodes.b().connectionManager().listen(at, (from, req) -> CompletableFuture.failedFuture(new IllegalStateException("full")));
        Throwable t = failure(nodes.a().connectionManager().connect(at, params(), 1_000));
        assertTrue(t instanceof VerbsException && t.getMessage().contains("rejected") && t.getMessage().contains("full"), t.getMessage());
    }

    @Test
    void unansweredConnectTimesOutInVirtualTime() {
        PortAddress at = new PortAddress("mem", nodes.b().devices().get(0).name(), 7001);
        nodes.b().connectionManager().listen(at, (from, req) -> new CompletableFuture<>());
        CompletableFuture<CmParams> f = nodes.a().connectionManager().connect(at, params(), 5_000);
        nodes.progress();
        assertFalse(f.isDone());
        nodes.clock().advance(4_999);
        nodes.progress();
        assertFalse(f.isDone(), "not before the deadline");
        nodes.clock().advance(1);
        nodes.progress();
        assertTrue(failure(f).getMessage().contains("timed out"));
    }

    @Test
    void listenRejectsAddressesInUseOrNotLocal() {
        String devB = nodes.b().devices().get(0).name();
        PortAddress at = new PortAddress("mem", devB, 7002);
        nodes.b().connectionManager().listen(at, (from, req) -> new CompletableFuture<>());
        VerbsException e = assertThrows(VerbsException.class,
            () -> nodes.b().connectionManager().listen(at, (from, req) -> new CompletableFuture<>()));
        assertTrue(e.getMessage().contains("in use"), e.getMessage());
        e = assertThrows(VerbsException.class,
            () -> nodes.a().connectionManager().listen(at, (from, req) -> new CompletableFuture<>()));
        assertTrue(e.getMessage().contains("not a device of this provider"), e.getMessage());
        assertThrows(VerbsException.class, () -> nodes.a().connectionManager().listen(new PortAddress("net", "10.0.0.1", 1),
            (from, req) -> new CompletableFuture<>()));
        assertThrows(VerbsException.class, () -> nodes.a().connectionManager().connect(at, params(), 0));
    }

    @Test
    void closingTheProviderClosesItsListeners() {
        PortAddress at = new PortAddress("mem", nodes.b().devices().get(0).name(), 7003);
        nodes.b().connectionManager().listen(at, (from, req) -> new CompletableFuture<>());
        nodes.b().close();
        assertFalse(nodes.fabric().isListening(at));
    }

    private CmParams params() {
        return new CmParams(List.of(new io.rdmaflux.verbs.QpEndpoint(nodes.a().devices().get(0).port(1).address(), 1, 0, 4096)), new byte[0]);
    }
}
