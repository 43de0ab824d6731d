package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.ucx.UcxTestSupport.UcxPair;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** What the ucx provider adds to the TCK: bytes really cross UCX, what it refuses, opening it by name. */
@ExtendWith(UcxTestSupport.Checks.class)
class UcxProviderTest {
    @Test
    void aSendCrossesUcxAsActiveMessagesOverSharedMemory() {
        try (UcxPair p = UcxPair.open("sm,self")) {
            assertEquals("ucx", p.da.port(1).address().fabric());
            MemoryRegion src = p.pa.allocateMemory(100_000, Access.LOCAL_WRITE);
            MemoryRegion dst = p.pb.allocateMemory(100_000, Access.LOCAL_WRITE);
            byte[] data = new byte[100_000];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (i * 7);
            }
            src.buffer().put(0, data);
            assertTrue(p.qb.postReceive(new ReceiveWorkRequest().wrId(1).sge(dst, 0, 100_000)));
            assertTrue(p.qa.postSend(new SendWorkRequest().wrId(2).sge(src, 0, 100_000)));
            List<WorkCompletion> wcs = new ArrayList<>();
            p.drive(() -> {
                p.ca.poll(1, wc -> wcs.add(wc.copy()));
                p.cb.poll(1, wc -> wcs.add(wc.copy()));
                return wcs.size() >= 2;
            }, "both completions");
            assertEquals(2, wcs.size(), () -> "completions: " + wcs);
            assertTrue(wcs.stream().allMatch(WorkCompletion::isSuccess), wcs::toString);
            byte[] got = new byte[100_000];
            dst.buffer().get(0, got);
            assertArrayEquals(data, got);
            long[] a = p.hostA().frameCounts(0);
            long[] b = p.hostB().frameCounts(0);
            assertTrue(a[0] >= 1 && b[1] >= 1, "the request went A -> B through UCX: A sent " + a[0] + ", B received " + b[1]);
            assertTrue(b[0] >= 1 && a[1] >= 1, "the acknowledgement came back through UCX: B sent " + b[0] + ", A received " + a[1]);
        }
    }

    @Test
    void unreliableDatagramAndSharedReceiveQueuesAreRefusedNamingTheProvider() {
        try (UcxFixture fx = new UcxFixture("sm,self")) {
            Device d = fx.deviceA();
            assertFalse(d.capabilities().unreliableDatagram());
            assertFalse(d.capabilities().sharedReceiveQueue());
            assertTrue(d.capabilities().atomics(), "the soft NIC's atomics, carried by UCX");
            ProtectionDomain pd = d.allocateProtectionDomain();
            CompletionQueue cq = d.createCompletionQueue(4);
            VerbsException ud = assertThrows(VerbsException.class,
                () -> pd.createQueuePair(QpInitAttributes.builder(QpType.UD, d.port(1)).cq(cq).build()));
            assertTrue(ud.getMessage().contains("'ucx'") && ud.getMessage().contains("UD"), ud.getMessage());
            VerbsException srq = assertThrows(VerbsException.class, () -> pd.createSharedReceiveQueue(8));
            assertTrue(srq.getMessage().contains("'ucx'") && srq.getMessage().contains("shared receive"), srq.getMessage());
        }
    }

    @Test
    void connectingToAnAddressThatIsNotOnTheUcxFabricNamesIt() {
        try (UcxFixture fx = new UcxFixture("tcp")) {
            Device d = fx.deviceA();
            ProtectionDomain pd = d.allocateProtectionDomain();
            CompletionQueue cq = d.createCompletionQueue(4);
            QueuePair qp = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, d.port(1)).cq(cq).build());
            qp.init();
            VerbsException e = assertThrows(VerbsException.class,
                () -> qp.readyToReceive(new io.rdmaflux.verbs.QpEndpoint(new PortAddress("ucx", "nosuch", 1), 1, 0, 4096)));
            assertTrue(e.getMessage().contains("nosuch"), e.getMessage());
        }
    }

    @Test
    void openedByNameWithOptionsAndBadOptionsAreNamed() {
        try (RdmaProvider p = RdmaProviders.open("ucx", Map.of("tls", "tcp", "threading", "invoker"))) {
            assertEquals("ucx", p.name());
            assertEquals(1, p.devices().size());
        }
        try (RdmaProvider p = RdmaProviders.open("ucx", Map.of("tls", "sm,self", "threading", "invoker", "devices", "2", "ports", "3"))) {
            assertEquals(2, p.devices().size());
            assertEquals(3, p.devices().get(1).ports().size(), "ports=3: three rails per device");
        }
        VerbsException ports = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("ports", "17")));
        assertTrue(ports.getMessage().contains("17") && ports.getMessage().contains("[1, 16]"), ports.getMessage());
        VerbsException portsNaN = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("ports", "two")));
        assertTrue(portsNaN.getMessage().contains("ports='two'"), portsNaN.getMessage());
        VerbsException unknown = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("colour", "red")));
        assertTrue(unknown.getMessage().contains("colour") && unknown.getMessage().contains("tls"), unknown.getMessage());
        VerbsException threading = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("threading", "shared")));
        assertTrue(threading.getMessage().contains("shared"), threading.getMessage());
        VerbsException tls = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("tls", "nosuchtransport")));
        assertTrue(tls.getMessage().contains("nosuchtransport"), tls.getMessage());
        VerbsException blank = assertThrows(VerbsException.class, () -> UcxProvider.builder().tls(" "));
        assertTrue(blank.getMessage().contains("blank"), blank.getMessage());
    }

    @Test
    void autoSelectionPrefersUcxOverSoftOnlyWithAnRdmaDevice(@org.junit.jupiter.api.io.TempDir java.nio.file.Path sysfs) throws Exception {
        assertEquals(-1, UcxProviderFactory.priority(sysfs), "no device: below soft, UCX would run over tcp/sm only");
        assertEquals(-1, UcxProviderFactory.priority(sysfs.resolve("absent")));
        java.nio.file.Files.createDirectory(sysfs.resolve("mlx5_0"));
        assertEquals(5, UcxProviderFactory.priority(sysfs), "an RDMA device: above soft");
        String expected = UcxProviderFactory.priority(java.nio.file.Path.of("/sys/class/infiniband")) > 0 ? "ucx" : "soft";
        try (RdmaProvider p = RdmaProviders.open(RdmaProviders.AUTO, Map.of("threading", "invoker"))) {
            assertEquals(expected, p.name());
        }
    }
}
