package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the provider refuses (UD, SRQ, foreign objects, bad options) and what it reports. */
class DisniProviderBadInputTest {
    @TempDir
    Path sysfs;

    @Test
    void capabilitiesSayRcAndReadOnlyAndUdSrqAndAddressHandlesFailClearly() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            DeviceCapabilities caps = t.da.capabilities();
            assertFalse(caps.unreliableDatagram());
            assertFalse(caps.sharedReceiveQueue());
            assertTrue(caps.rdmaRead());
            assertFalse(caps.orderedWritePlacement(), "DiSNI cannot vouch for the placement order of WRITE data");
            assertEquals(Integer.MAX_VALUE, caps.maxMemoryRegionBytes(), "DiSNI registers with an int length");
            VerbsException e = assertThrows(VerbsException.class,
                () -> t.pa.createQueuePair(QpInitAttributes.builder(QpType.UD, t.da.port(1)).cq(t.ca).build()));
            assertTrue(e.getMessage().contains("no UD queue pairs") && e.getMessage().contains("'soft'"), e.getMessage());
            e = assertThrows(VerbsException.class, () -> t.pa.createSharedReceiveQueue(16));
            assertTrue(e.getMessage().contains("no shared receive queues"), e.getMessage());
            e = assertThrows(VerbsException.class, () -> t.pa.createAddressHandle(t.da.port(1), t.db.port(1).address()));
            assertTrue(e.getMessage().contains("no UD address handles"), e.getMessage());
            assertTrue(t.fx.a.connectionManager() instanceof DisniConnectionManager);
            assertEquals(t.fx.a.connectionManager(), t.fx.a.connectionManager(), "one per provider");
        }
    }

    @Test
    void queuePairsOnAnotherDevicesPortOrCqAreRejectedNamingIt() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            VerbsException e = assertThrows(VerbsException.class,
                () -> t.pa.createQueuePair(QpInitAttributes.builder(QpType.RC, t.db.port(1)).cq(t.ca).build()));
            assertTrue(e.getMessage().contains("not a port of disni0"), e.getMessage());
            e = assertThrows(VerbsException.class,
                () -> t.pa.createQueuePair(QpInitAttributes.builder(QpType.RC, t.da.port(1)).cq(t.cb).build()));
            assertTrue(e.getMessage().contains("completion queue"), e.getMessage());
            e = assertThrows(VerbsException.class, () -> t.qpA(b -> b.maxInlineBytes(1000)));
            assertTrue(e.getMessage().contains("1000") && e.getMessage().contains("maxInline="), e.getMessage());
        }
    }

    @Test
    void theDevicesOneCqBoundsTheOutstandingWorkRequestsOfItsQps() {
        try (DisniTestSupport t = new DisniTestSupport()) {
            // 16384 native CQ entries: 31 QPs of 256 + 256 fit, the 33rd does not
            for (int i = 0; i < 32; i++) {
                t.qpA(UnaryOperator.identity());
            }
            VerbsException e = assertThrows(VerbsException.class, () -> t.qpA(UnaryOperator.identity()));
            assertTrue(e.getMessage().contains("16384") && e.getMessage().contains("cqEntries="), e.getMessage());
        }
    }

    @Test
    void optionsAreParsedAndBadOnesNamed() throws Exception {
        InetAddress found = InetAddress.getByName("127.0.3.1");
        DisniOptions o = DisniOptions.parse(Map.of(), List.of(found));
        assertEquals(List.of(found), o.addresses());
        assertEquals(ThreadingMode.DEDICATED, o.threading());
        o = DisniOptions.parse(Map.of("addresses", "127.0.4.1, 127.0.4.2", "threading", "invoker", "mtu", "2048", "maxInline", "128"), List.of());
        assertEquals(2, o.addresses().size());
        assertEquals(ThreadingMode.INVOKER, o.threading());
        assertEquals(2048, o.mtuBytes());
        assertEquals(128, o.maxInlineBytes());
        assertMessage(Map.of("tls", "tcp"), "unknown option 'tls'");
        assertMessage(Map.of("mtu", "1500"), "mtu=1500");
        assertMessage(Map.of("mtu", "big"), "mtu='big'");
        assertMessage(Map.of("threading", "shared"), "threading='shared'");
        assertMessage(Map.of("addresses", "rdma-host"), "'rdma-host', which is not an IP address literal");
        VerbsException e = assertThrows(VerbsException.class, () -> DisniOptions.parse(Map.of(), List.of()));
        assertTrue(e.getMessage().contains("addresses=IP"), e.getMessage());
    }

    private static void assertMessage(Map<String, String> options, String part) {
        VerbsException e = assertThrows(VerbsException.class, () -> DisniOptions.parse(options, List.of(InetAddress.getLoopbackAddress())));
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }

    @Test
    void discoveryReadsTheNetDevicesOfEveryRdmaDevice() throws Exception {
        Files.createDirectories(sysfs.resolve("mlx5_0/device/net/ib0"));
        Files.createDirectories(sysfs.resolve("mlx5_1/device/net/enp1s0f1"));
        Files.createDirectories(sysfs.resolve("rxe0")); // soft-RoCE without a device/net link: skipped
        InetAddress ib0 = InetAddress.getByName("127.0.5.1");
        InetAddress roce = InetAddress.getByName("127.0.5.2");
        List<InetAddress> found = DisniDeviceDiscovery.discover(sysfs,
            netdev -> switch (netdev) {
                case "ib0" -> List.of(ib0);
                case "enp1s0f1" -> List.of(roce, ib0);
                default -> List.of();
            });
        assertEquals(List.of(ib0, roce), found, "device order, each address once");
        assertEquals(List.of(), DisniDeviceDiscovery.discover(sysfs.resolve("absent"), n -> List.of(ib0)));
    }

    @Test
    void anAddressNoDeviceHasFailsToOpenNamingIt() {
        VerbsLeakCheck leaks = VerbsLeakCheck.begin();
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            SoftSeam seam = new SoftSeam(Map.of(DisniSoftFixture.IP_A, nodes.a().devices().get(0)));
            VerbsException e = assertThrows(VerbsException.class, () -> DisniProvider.builder().seam(seam)
                .options(DisniOptions.invoker(List.of(DisniSoftFixture.address("127.0.6.1")))).build());
            assertTrue(e.getMessage().contains("127.0.6.1") && e.getMessage().contains("EADDRNOTAVAIL"), e.getMessage());
            seam.assertAllReleased();
        }
        leaks.assertClean();
    }

    @Test
    void theDedicatedThreadIsNamedAndEndsWithTheProvider() {
        VerbsLeakCheck leaks = VerbsLeakCheck.begin();
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            SoftSeam seam = new SoftSeam(Map.of(DisniSoftFixture.IP_A, nodes.a().devices().get(0)));
            DisniOptions o = DisniOptions.parse(Map.of("addresses", DisniSoftFixture.IP_A), List.of());
            DisniProvider p = DisniProvider.builder().name("dedicated").seam(seam).options(o).build();
            assertEquals(ThreadingMode.DEDICATED, p.threadingMode());
            assertTrue(Thread.getAllStackTraces().keySet().stream().anyMatch(th -> th.getName().equals("rdmaflux-disni-dedicated")));
            p.connectionManager();
            p.close();
            p.close();
            assertThrows(VerbsException.class, () -> p.progress(0));
            assertThrows(VerbsException.class, p::connectionManager);
            seam.assertAllReleased();
            assertEquals(null, p.lastError());
        }
        leaks.assertClean();
    }
}
