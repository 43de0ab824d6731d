package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.internal.buffer.MessageBufferPool;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nodes whose rails are on several devices (HCAs) of the soft provider, in virtual time: memory registered
 * once per device, every stripe written with its rail's device keys, one shared CQ per device, rails
 * picked by name, and a device that fails failing its rails over to the other device's.
 */
class MultiDeviceNodeTest {
    private static int size(int i) {
        return switch (i % 4) {
            case 0 -> 40_000 + 13 * i;   // rendezvous, striped over both devices
            case 1 -> 3000 + i;          // rendezvous, one stripe
            default -> 16 + i % 100;     // one frame
        };
    }

    private static byte[] bytes(int i) {
        return RendezvousTest.pattern(size(i), i);
    }

    private static long remoteAccessRefused(SoftProvider p) {
        long n = 0;
        for (int d = 0; d < p.devices().size(); d++) {
            n += p.softDevice(d).remoteAccessRefused();
        }
        return n;
    }

    /** Sends {@code n} messages client to server, releasing as they come; returns them in arrival order by PSN. */
    private static List<Integer> exchange(InvokerPair p, int n, Runnable midway) {
        List<Integer> psns = new ArrayList<>();
        List<RdmaMessage> held = new ArrayList<>();
        p.server.receive().subscribe(m -> {
            assertArrayEquals(bytes(m.psn()), m.toByteArray(), "PSN " + m.psn());
            psns.add(m.psn());
            held.add(m);
        });
        AtomicBoolean sent = new AtomicBoolean();
        AtomicReference<Throwable> error = new AtomicReference<>();
        p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(bytes(i)))).subscribe(null, error::set, () -> sent.set(true));
        boolean fired = false;
        for (int step = 0; !(sent.get() && psns.size() == n); step++) {
            assertNull(error.get(), () -> "send failed: " + error.get());
            assertTrue(step < 400_000, () -> "stalled at " + psns.size() + "\n" + ConnectionProbe.describe(p.client)
                + "\n" + ConnectionProbe.describe(p.server));
            if (!fired && psns.size() >= n / 3) {
                midway.run();
                fired = true;
            }
            if (p.pass() == 0) {
                p.soft.clock().advance(1_000);
            }
            if (!held.isEmpty()) {
                held.remove(0).release();
            }
        }
        held.forEach(RdmaMessage::release);
        p.drive();
        return psns;
    }

    @Test
    void railsOfTwoDevicesStripeEachStripeWithItsDevicesKeys() {
        AtomicReference<RendezvousTest.RecordingStriper> striper = new AtomicReference<>();
        ChannelFactory f = subchannels -> {
            RendezvousTest.RecordingStriper s = new RendezvousTest.RecordingStriper(subchannels);
            striper.set(s);
            return s;
        };
        try (InvokerPair p = InvokerPair.overDevices(2, 1, ConnectionSpec.rails(2).striping(f).rendezvous(RendezvousMode.READ),
            b -> b.bufferBytes(1024).receiveBuffers(8).maxMessageBytes(64 * 1024))) {
            assertEquals(2, p.clientNode.deviceNames().size());
            assertNotEquals(p.client.subchannels().get(0).port().device(), p.client.subchannels().get(1).port().device());
            // the rendezvous pools: one registration per device, each with keys of its own
            MessageBufferPool receive = p.serverNode.rendezvousPool(true);
            assertNotEquals(receive.address(0), 0L);
            assertEquals(receive.rkey(), receive.rkey(0));
            assertTrue(receive.rkey(1) != 0 || receive.rkey(0) != 0);
            assertEquals(RendezvousMode.WRITE, p.client.rendezvousMode(), "one rkey per rail travels in the CTS only: WRITE rendezvous");
            List<Integer> psns = exchange(p, 80, () -> { });
            for (int i = 0; i < psns.size(); i++) {
                assertEquals(i, psns.get(i), "exactly once, in PSN order");
            }
            assertFalse(striper.get().stripedPsns.isEmpty(), "large messages were striped");
            for (Subchannel sc : p.client.subchannels()) {
                assertTrue(sc.bytesSent() > 100_000, "rail " + sc.rail() + " carried stripes: " + sc.bytesSent());
            }
            assertEquals(0, remoteAccessRefused(p.soft.a()) + remoteAccessRefused(p.soft.b()), "no stripe used another device's rkey");
        }
    }

    @ParameterizedTest(name = "device {0} of the server fails")
    @ValueSource(ints = {0, 1})
    void aDeviceThatFailsFailsItsRailsOverToTheOtherDevicesRails(int failed) {
        try (InvokerPair p = InvokerPair.overDevices(2, 2, ConnectionSpec.rails(4),
            b -> b.bufferBytes(1024).receiveBuffers(8).maxMessageBytes(64 * 1024))) {
            SoftDevice device = p.soft.b().softDevice(failed);
            List<Integer> psns = exchange(p, 120, () -> device.setPortsState(PortState.DOWN));
            for (int i = 0; i < psns.size(); i++) {
                assertEquals(i, psns.get(i), "exactly once, in PSN order");
            }
            assertFalse(p.client.isDisposed());
            assertEquals(2, ConnectionProbe.railFailures(p.client), "both rails of the failed device");
            for (Subchannel sc : p.client.subchannels()) {
                boolean onFailed = sc.rail() / 2 == failed;
                assertEquals(!onFailed, sc.isUsable(), "rail " + sc.rail());
            }
            assertEquals(0, p.serverNode.rendezvousPool(true).inUse());
            assertEquals(0, p.clientNode.rendezvousPool(false).inUse());
        }
    }

    @Test
    void oneSharedCompletionQueuePerDeviceServesItsRails() {
        try (InvokerPair p = InvokerPair.overDevices(2, 2, ConnectionSpec.rails(4),
            b -> b.sharedCompletionQueue(8).bufferBytes(1024).receiveBuffers(8).maxMessageBytes(64 * 1024))) {
            assertEquals(2, p.clientNode.sharedCompletionQueue(0).queuePairs(), "device 0: its two rails");
            assertEquals(2, p.clientNode.sharedCompletionQueue(1).queuePairs(), "device 1: its two rails");
            assertEquals(2, p.serverNode.sharedCompletionQueue(1).queuePairs());
            List<Integer> psns = exchange(p, 40, () -> { });
            assertEquals(40, psns.size());
        }
    }

    @Test
    void connectionSpecPicksTheNodesRailsByName() {
        try (InvokerPair p = InvokerPair.overDevices(2, 1, ConnectionSpec.rails(2), b -> { })) {
            List<String> names = p.clientNode.railNames();
            assertEquals(List.of(p.soft.a().devices().get(0).name() + ":1", p.soft.a().devices().get(1).name() + ":1"), names);
            AtomicReference<RdmaConnection> picked = new AtomicReference<>();
            RdmaServer listener = p.serverNode.bind(new io.rdmaflux.verbs.PortAddress("mem", p.soft.b().devices().get(0).name(), 0));
            listener.accept().subscribe(RdmaConnection::close);
            p.clientNode.connect(listener.address(), ConnectionSpec.rails(names.get(1))).subscribe(picked::set);
            p.runUntil(() -> picked.get() != null);
            assertEquals(p.soft.a().devices().get(1), picked.get().subchannels().get(0).port().device(), "the rail named, on device 1");
            picked.get().close();

            AtomicReference<Throwable> error = new AtomicReference<>();
            p.clientNode.connect(listener.address(), ConnectionSpec.rails("nosuch0:1")).subscribe(null, error::set);
            p.drive();
            assertTrue(error.get() instanceof IllegalArgumentException, () -> "" + error.get());
            assertTrue(error.get().getMessage().contains("'nosuch0:1'") && error.get().getMessage().contains(names.get(0)),
                error.get().getMessage());
            listener.close();
            p.drive();
        }
    }

    @Test
    void pathsAreSeveralRailsOnOnePort() {
        try (InvokerPair p = InvokerPair.open(1, ConnectionSpec.defaults(), b -> { })) {
            String dev = p.soft.a().devices().get(0).name();
            try (RdmaNode node = RdmaNode.builder().provider(p.soft.a()).name("paths").rails(RailSpec.of(dev, 1).paths(2))
                .threadingMode(io.rdmaflux.verbs.ThreadingMode.INVOKER).clock(p.soft.clock()).driveProvider(false).build()) {
                assertEquals(List.of(dev + ":1/0", dev + ":1/1"), node.railNames());
                assertEquals(node.ports().get(0), node.ports().get(1));
                RdmaServer listener = p.serverNode.bind(new io.rdmaflux.verbs.PortAddress("mem", p.soft.b().devices().get(0).name(), 0));
                listener.accept().subscribe(RdmaConnection::close);
                AtomicReference<Throwable> error = new AtomicReference<>();
                node.connect(listener.address(), ConnectionSpec.rails(dev + ":1/1", dev + ":1/0")).subscribe(null, error::set);
                for (int i = 0; i < 2000; i++) {
                    if (p.pass() + node.invoke() == 0) {
                        p.soft.clock().advance(1_000);
                    }
                }
                // the server has one rail: two paths are refused by it, naming the rail count
                assertTrue(error.get() != null && error.get().getMessage().contains("2 rails"), () -> "" + error.get());
                listener.close();
            }
        }
    }

    @Test
    void aBufferTooSmallForTheCtsOfEveryRailIsRefusedAtBuild() {
        try (InvokerPair p = InvokerPair.overDevices(2, 4, ConnectionSpec.rails(1), b -> { })) {
            String d0 = p.soft.a().devices().get(0).name();
            String d1 = p.soft.a().devices().get(1).name();
            RdmaNode.Builder b = RdmaNode.builder().provider(p.soft.a()).bufferBytes(64)
                .rails(d0 + ":1:4," + d1 + ":1:3");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
            assertTrue(e.getMessage().contains("bufferBytes 64 cannot hold the 68-byte CTS of 7 rails") && e.getMessage().contains("at least 68"),
                e.getMessage());
        }
    }

    @Test
    void reliableUdRailsOverSeveralDevicesAreRefusedAtConnect() {
        io.rdmaflux.core.channel.ChannelProvider ud = new io.rdmaflux.core.channel.ChannelProvider() {
            @Override
            public io.rdmaflux.core.channel.ChannelKind kind() {
                return io.rdmaflux.core.channel.ChannelKind.RELIABLE_UD;
            }

            @Override
            public io.rdmaflux.core.channel.Channel open(io.rdmaflux.core.channel.ChannelSetup setup) {
                throw new AssertionError("no channel is opened for a refused spec");
            }
        };
        try (InvokerPair p = InvokerPair.overDevices(2, 1, ConnectionSpec.rails(2), b -> b.channelProvider(ud))) {
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.clientNode.connect(p.listenAddress(), ConnectionSpec.rails(2).channelKind(io.rdmaflux.core.channel.ChannelKind.RELIABLE_UD))
                .subscribe(null, error::set);
            p.drive();
            assertTrue(error.get() instanceof IllegalArgumentException, () -> "" + error.get());
            assertTrue(error.get().getMessage().contains("RELIABLE_UD on rail 0 of a connection whose rails span several devices"),
                error.get().getMessage());
        }
    }

    @Test
    void oneSidedRdmaIsRefusedOnAConnectionSpanningDevices() {
        try (InvokerPair p = InvokerPair.overDevices(2, 1, ConnectionSpec.rails(2), b -> { })) {
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, p.client::oneSided);
            assertTrue(e.getMessage().contains("several devices"), e.getMessage());
        }
    }

    @Test
    void badRailsNameTheValueAndTheFix() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RailSpec.parse("soft0"));
        assertTrue(e.getMessage().contains("'soft0'") && e.getMessage().contains("device:port[:paths]"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RailSpec.parse("soft0:x"));
        assertTrue(e.getMessage().contains("port 'x'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RailSpec.parse("soft0:0"));
        assertTrue(e.getMessage().contains("'soft0:0'") && e.getMessage().contains("from 1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RailSpec.parse("soft0:1:0"));
        assertTrue(e.getMessage().contains("paths"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RailSpec.parseList("soft0:1,,soft1:1"));
        assertTrue(e.getMessage().contains("empty entry"), e.getMessage());
        assertEquals(List.of(RailSpec.of("soft0", 1), RailSpec.of("mlx5_1", 2).paths(3)), RailSpec.parseList("soft0:1, mlx5_1:2:3"));
        assertEquals("mlx5_1:2:3", RailSpec.of("mlx5_1", 2).paths(3).toString());
        e = assertThrows(IllegalArgumentException.class, () -> ConnectionSpec.rails("a:1", "a:1"));
        assertTrue(e.getMessage().contains("repeated"), e.getMessage());

        try (InvokerPair p = InvokerPair.open()) {
            String dev = p.soft.a().devices().get(0).name();
            RdmaNode.Builder both = RdmaNode.builder().provider(p.soft.a()).rails(dev + ":1").ports(1);
            e = assertThrows(IllegalArgumentException.class, both::build);
            assertTrue(e.getMessage().contains("cannot be combined"), e.getMessage());
            RdmaNode.Builder twice = RdmaNode.builder().provider(p.soft.a()).rails(dev + ":1," + dev + ":1");
            e = assertThrows(IllegalArgumentException.class, twice::build);
            assertTrue(e.getMessage().contains("given twice") && e.getMessage().contains("paths"), e.getMessage());
            RdmaNode.Builder unknown = RdmaNode.builder().provider(p.soft.a()).rails("nosuch9:1");
            VerbsException v = assertThrows(VerbsException.class, unknown::build);
            assertTrue(v.getMessage().contains("'nosuch9'") && v.getMessage().contains(dev), v.getMessage());
        }
    }
}
