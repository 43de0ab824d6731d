package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code cm=tcp}: the worker-address trailer, the per-provider directory, and the TCP connection
 * manager's refusals (bad addresses, peers that announce no worker addresses), each named.
 */
class UcxRemoteCmTest {
    private static final PortAddress ANY_LOOPBACK = new PortAddress("ucx", "127.0.0.1", 0);
    private VerbsLeakCheck leaks;

    @BeforeEach
    void begin() {
        leaks = VerbsLeakCheck.begin();
    }

    @AfterEach
    void end() {
        leaks.assertClean();
    }

    private static CmParams params(PortAddress at, byte[] privateData) {
        return new CmParams(List.of(new QpEndpoint(at, 7, 3, 4096)), privateData);
    }

    // ------------------------------------------------------------ the trailer (no UCX needed)

    @Test
    void theTrailerRoundTripsAndLeavesTheApplicationsPrivateDataAsItWas() {
        byte[] app = {1, 2, 3, (byte) 0x41, (byte) 0x58, (byte) 0x43, (byte) 0x55}; // ends like the magic, reversed
        var d1 = new UcxPeerAddresses.Device("ucx0-abc", 2, new byte[] {9, 8, 7});
        var d2 = new UcxPeerAddresses.Device("ucx1-abc", 1, new byte[200]);
        CmParams with = UcxPeerAddresses.append(params(new PortAddress("ucx", "ucx0-abc", 1), app), List.of(d1, d2));
        UcxPeerAddresses.Stripped s = UcxPeerAddresses.strip(with, "peer");
        assertArrayEquals(app, s.params().privateData());
        assertEquals(with.endpoints(), s.params().endpoints());
        assertEquals(List.of(d1, d2), s.devices());
        UcxPeerAddresses.Stripped none = UcxPeerAddresses.strip(UcxPeerAddresses.append(params(ANY_LOOPBACK, new byte[0]), List.of()), "peer");
        assertEquals(0, none.params().privateData().length);
        assertEquals(List.of(), none.devices());
    }

    @Test
    void privateDataWithoutTheTrailerIsRefusedNamingTheSenderAndTheFix() {
        VerbsException e = assertThrows(VerbsException.class, () -> UcxPeerAddresses.strip(params(ANY_LOOPBACK, new byte[] {1, 2}), "net://10.0.0.9:7"));
        assertTrue(e.getMessage().contains("net://10.0.0.9:7") && e.getMessage().contains("cm=tcp"), e.getMessage());
    }

    @Test
    void aMalformedTrailerIsRefusedNamingTheFault() {
        byte[] good = UcxPeerAddresses.append(params(ANY_LOOPBACK, new byte[0]),
            List.of(new UcxPeerAddresses.Device("ucx0-x", 1, new byte[] {5, 5}))).privateData();
        // the trailer claims more bytes than the private data has
        byte[] tooLong = good.clone();
        java.nio.ByteBuffer.wrap(tooLong).putInt(tooLong.length - 8, 10_000);
        VerbsException e1 = assertThrows(VerbsException.class, () -> UcxPeerAddresses.strip(params(ANY_LOOPBACK, tooLong), "p"));
        assertTrue(e1.getMessage().contains("malformed") && e1.getMessage().contains("10000"), e1.getMessage());
        // two devices announced, one present
        byte[] count = good.clone();
        java.nio.ByteBuffer.wrap(count).putShort(count.length - 10, (short) 2);
        VerbsException e2 = assertThrows(VerbsException.class, () -> UcxPeerAddresses.strip(params(ANY_LOOPBACK, count), "p"));
        assertTrue(e2.getMessage().contains("2 devices announced"), e2.getMessage());
        // fewer devices announced than bytes present
        byte[] fewer = good.clone();
        java.nio.ByteBuffer.wrap(fewer).putShort(fewer.length - 10, (short) 0);
        VerbsException e3 = assertThrows(VerbsException.class, () -> UcxPeerAddresses.strip(params(ANY_LOOPBACK, fewer), "p"));
        assertTrue(e3.getMessage().contains("bytes left"), e3.getMessage());
    }

    @Test
    void privateDataAndAddressesBeyondTheLimitAreRefusedWithTheSizes() {
        byte[] app = new byte[ConnectionManager.MAX_PRIVATE_DATA_BYTES - 100];
        VerbsException e = assertThrows(VerbsException.class, () -> UcxPeerAddresses.append(params(ANY_LOOPBACK, app),
            List.of(new UcxPeerAddresses.Device("ucx0-x", 1, new byte[200]))));
        assertTrue(e.getMessage().contains(Integer.toString(app.length)) && e.getMessage().contains("4096"), e.getMessage());
    }

    // ------------------------------------------------------------ the directory

    @Test
    void theDirectoryRefusesConflictingAndOutOfRangeAnnouncements() {
        UcxDirectory d = new UcxDirectory("test");
        d.learn("ucx7-aa", new byte[] {1, 2}, 2);
        d.learn("ucx7-aa", new byte[] {1, 2}, 2); // the same again: fine
        assertEquals(2, d.lookup(new PortAddress("ucx", "ucx7-aa", 2)).ports());
        VerbsException other = assertThrows(VerbsException.class, () -> d.learn("ucx7-aa", new byte[] {1, 3}, 2));
        assertTrue(other.getMessage().contains("ucx7-aa") && other.getMessage().contains("two peers"), other.getMessage());
        VerbsException ports = assertThrows(VerbsException.class, () -> d.learn("ucx8-aa", new byte[] {1}, 0));
        assertTrue(ports.getMessage().contains("0 ports"), ports.getMessage());
        VerbsException big = assertThrows(VerbsException.class, () -> d.learn("ucx8-aa", new byte[UcxDirectory.MAX_WORKER_ADDRESS_BYTES + 1], 1));
        assertTrue(big.getMessage().contains(Integer.toString(UcxDirectory.MAX_WORKER_ADDRESS_BYTES + 1)), big.getMessage());
        VerbsException port = assertThrows(VerbsException.class, () -> d.lookup(new PortAddress("ucx", "ucx7-aa", 3)));
        assertTrue(port.getMessage().contains("ports 1..2"), port.getMessage());
        VerbsException unknown = assertThrows(VerbsException.class, () -> d.lookup(new PortAddress("ucx", "ucx9-zz", 1)));
        assertTrue(unknown.getMessage().contains("ucx9-zz") && unknown.getMessage().contains("cm=tcp"), unknown.getMessage());
        VerbsException fabric = assertThrows(VerbsException.class, () -> d.lookup(new PortAddress("net", "10.0.0.1", 1)));
        assertTrue(fabric.getMessage().contains("not on the UCX fabric"), fabric.getMessage());
    }

    // ------------------------------------------------------------ the connection manager (UCX needed)

    @Test
    void cmTcpProvidersReachNothingBeforeAnExchangeAndEachOtherAfterIt() {
        UcxTestSupport.assumeUcx();
        try (UcxRemoteFixture fx = new UcxRemoteFixture("tcp")) {
            assertEquals(2, fx.hostA().knownDevices());
            assertEquals(2, fx.hostB().knownDevices());
            assertEquals(UcxProvider.Cm.TCP, fx.hostA().cm());
            assertTrue(fx.deviceA().name().matches("ucx\\d+-[0-9a-f]{12}"), fx.deviceA().name());
        }
        try (UcxProvider a = tcpProvider("a"); UcxProvider b = tcpProvider("b")) {
            var pd = a.devices().get(0).allocateProtectionDomain();
            var cq = a.devices().get(0).createCompletionQueue(4);
            QueuePair qp = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, a.devices().get(0).port(1)).cq(cq).build());
            qp.init();
            PortAddress bAddress = b.devices().get(0).port(1).address();
            VerbsException e = assertThrows(VerbsException.class, () -> qp.readyToReceive(new QpEndpoint(bAddress, 1, 0, 4096)));
            assertTrue(e.getMessage().contains(bAddress.host()) && e.getMessage().contains("cm=tcp"), e.getMessage());
            qp.close();
            cq.close();
            pd.close();
        }
    }

    @Test
    void theTcpCmRefusesAddressesThatAreNotIpsOnTheUcxFabric() {
        UcxTestSupport.assumeUcx();
        try (UcxProvider p = tcpProvider("a")) {
            ConnectionManager cm = p.connectionManager();
            ConnectionManager.RequestHandler refuse = (from, r) -> CompletableFuture.failedFuture(new VerbsException("no"));
            VerbsException net = assertThrows(VerbsException.class, () -> cm.listen(new PortAddress("net", "127.0.0.1", 0), refuse));
            assertTrue(net.getMessage().contains("ucx://<ip>:<tcp port>"), net.getMessage());
            PortAddress device = new PortAddress("ucx", p.devices().get(0).name(), 0);
            VerbsException dev = assertThrows(VerbsException.class, () -> cm.listen(device, refuse));
            assertTrue(dev.getMessage().contains("names a device") && dev.getMessage().contains(device.toString()), dev.getMessage());
            CompletableFuture<CmParams> f = cm.connect(new PortAddress("mem", "x", 1), params(p.devices().get(0).port(1).address(), new byte[0]), 1_000_000_000L);
            CompletionException c = assertThrows(CompletionException.class, f::join);
            assertTrue(c.getCause().getMessage().contains("mem://x:1"), c.getCause().getMessage());
            try (ConnectionManager.Listener l = cm.listen(ANY_LOOPBACK, refuse)) {
                assertEquals("ucx", l.address().fabric());
                assertTrue(l.address().port() > 0, l.address().toString());
                // a REJECT names the ucx:// address the caller gave, not the net CM's net:// one
                CompletableFuture<CmParams> rejected = cm.connect(l.address(), params(p.devices().get(0).port(1).address(), new byte[0]),
                    10_000_000_000L);
                progressUntil(rejected::isDone, p);
                CompletionException r = assertThrows(CompletionException.class, rejected::join);
                assertTrue(r.getCause().getMessage().contains("rejected") && r.getCause().getMessage().contains(l.address().toString())
                    && !r.getCause().getMessage().contains("net://"), r.getCause().getMessage());
            }
        }
    }

    @Test
    void aPeerThatAnnouncesNoWorkerAddressesIsRejectedAndAListenerThatSendsNoneFailsTheConnect() {
        UcxTestSupport.assumeUcx();
        try (UcxProvider ucx = tcpProvider("a");
             SoftProvider soft = NetProviders.builder(NetTransportConfig.loopback()).name("soft-net").threadingMode(ThreadingMode.INVOKER).build()) {
            CmParams softParams = params(soft.devices().get(0).port(1).address(), new byte[0]);
            CmParams ucxParams = params(ucx.devices().get(0).port(1).address(), new byte[0]);
            // a soft net requester to a ucx cm=tcp listener: rejected
            try (ConnectionManager.Listener l = ucx.connectionManager().listen(ANY_LOOPBACK,
                    (from, r) -> CompletableFuture.completedFuture(ucxParams))) {
                CompletableFuture<CmParams> f = soft.connectionManager().connect(new PortAddress("net", "127.0.0.1", l.address().port()), softParams,
                    10_000_000_000L);
                progressUntil(f::isDone, ucx, soft);
                CompletionException e = assertThrows(CompletionException.class, f::join);
                assertTrue(e.getCause().getMessage().contains("rejected") && e.getCause().getMessage().contains("cm=tcp"), e.getCause().getMessage());
            }
            // a ucx cm=tcp requester to a soft net listener: the reply has no addresses
            try (ConnectionManager.Listener l = soft.connectionManager().listen(new PortAddress("net", "127.0.0.1", 0),
                    (from, r) -> CompletableFuture.completedFuture(softParams))) {
                CompletableFuture<CmParams> f = ucx.connectionManager().connect(new PortAddress("ucx", "127.0.0.1", l.address().port()), ucxParams,
                    10_000_000_000L);
                progressUntil(f::isDone, ucx, soft);
                CompletionException e = assertThrows(CompletionException.class, f::join);
                assertTrue(e.getCause().getMessage().contains("carries no UCX worker addresses"), e.getCause().getMessage());
            }
        }
    }

    @Test
    void theCmOptionIsReadAndABadOneNamed() {
        UcxTestSupport.assumeUcx();
        try (RdmaProvider p = RdmaProviders.open("ucx", Map.of("tls", "tcp", "threading", "invoker", "cm", "tcp"))) {
            assertEquals(UcxProvider.Cm.TCP, ((UcxProvider) p).cm());
        }
        try (RdmaProvider p = RdmaProviders.open("ucx", Map.of("tls", "tcp", "threading", "invoker"))) {
            assertEquals(UcxProvider.Cm.JVM, ((UcxProvider) p).cm(), "jvm by default");
        }
        VerbsException e = assertThrows(VerbsException.class, () -> RdmaProviders.open("ucx", Map.of("cm", "udp")));
        assertTrue(e.getMessage().contains("cm='udp'") && e.getMessage().contains("'tcp'"), e.getMessage());
    }

    private static UcxProvider tcpProvider(String name) {
        return UcxProvider.builder().name("cm-test-" + name).tls("tcp").cm(UcxProvider.Cm.TCP).threadingMode(ThreadingMode.INVOKER).build();
    }

    private static void progressUntil(BooleanSupplier done, RdmaProvider... providers) {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!done.getAsBoolean()) {
            for (RdmaProvider p : providers) {
                p.progress(System.nanoTime());
            }
            assertTrue(System.nanoTime() - deadline < 0, "not done within 20 s");
        }
    }
}
