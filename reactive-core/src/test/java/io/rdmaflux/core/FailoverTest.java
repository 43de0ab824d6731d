package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.soft.SoftPort;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rail failover: a rail killed mid-stream (port down) loses nothing and duplicates nothing; what was
 * in flight on it is sent again on the remaining rails and the receiver drops copies by PSN. Small
 * messages, fragmented ones and striped rendezvous messages interleaved, in virtual time.
 */
class FailoverTest {
    private static int size(int i) {
        return switch (i % 5) {
            case 0 -> 40_000 + 13 * i;   // rendezvous, striped (>= 8 KiB)
            case 1 -> 3000 + i;          // rendezvous, one stripe
            case 2 -> 700;               // one frame
            default -> 16 + i % 100;     // one frame
        };
    }

    private static byte[] bytes(int i) {
        return RendezvousTest.pattern(size(i), i);
    }

    /**
     * Every rail of 2 and 3, killed at many points of the stream (every 11 duty cycles from the first),
     * by the receiver's port or the sender's, with a pool of 1 and of 4 message buffers.
     */
    static Stream<Arguments> killPoints() {
        List<Arguments> cases = new ArrayList<>();
        for (int rails = 2; rails <= 3; rails++) {
            for (int killed = 0; killed < rails; killed++) {
                for (int passes = 1; passes < 120; passes += 11) {
                    for (String side : new String[] {"server", "client"}) {
                        for (int pool : new int[] {1, 4}) {
                            cases.add(Arguments.of(rails, killed, passes, side, pool));
                        }
                    }
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} rails, kill rail {1} after {2} passes, port on the {3} side, {4} message buffers")
    @MethodSource("killPoints")
    void aRailKilledMidStreamLosesAndDuplicatesNothing(int rails, int killed, int passes, String side, int pool) {
        AtomicReference<RendezvousTest.RecordingStriper> striper = new AtomicReference<>();
        ChannelFactory f = subchannels -> {
            RendezvousTest.RecordingStriper s = new RendezvousTest.RecordingStriper(subchannels);
            striper.set(s);
            return s;
        };
        try (InvokerPair p = InvokerPair.open(rails, ConnectionSpec.rails(rails).striping(f),
            b -> b.bufferBytes(1024).receiveBuffers(8).maxMessageBytes(64 * 1024).rendezvousBuffers(pool))) {
            int n = 150;
            List<RdmaMessage> got = new ArrayList<>();
            List<Integer> psns = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                psns.add(m.psn());
                assertArrayEquals(bytes(m.psn()), m.toByteArray(), "PSN " + m.psn());
                got.add(m);
            });
            AtomicBoolean sent = new AtomicBoolean();
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(bytes(i)))).subscribe(null, error::set, () -> sent.set(true));
            for (int i = 0; i < passes; i++) {
                p.pass();
                if (!got.isEmpty() && i % 3 == 0) {
                    got.remove(0).release();
                }
            }
            assertTrue(psns.size() < n, "the rail dies mid-stream, not after it");
            SoftPort port = (SoftPort) (side.equals("server") ? p.soft.b() : p.soft.a()).devices().get(0).port(killed + 1);
            port.setState(PortState.DOWN);
            for (int step = 0; !(sent.get() && psns.size() == n); step++) {
                assertTrue(error.get() == null, () -> "send failed: " + error.get());
                assertTrue(step < 200_000, () -> "stalled at " + psns.size() + "\n" + ConnectionProbe.describe(p.client)
                    + "\n" + ConnectionProbe.describe(p.server));
                if (p.pass() == 0) {
                    p.soft.clock().advance(1_000);
                }
                if (!got.isEmpty()) {
                    got.remove(0).release();
                }
            }
            for (int i = 0; i < n; i++) {
                assertEquals(i, psns.get(i), "exactly once, in PSN order");
            }
            got.forEach(RdmaMessage::release);
            got.clear();
            assertEquals(List.of(killed), List.of(striper.get().failures.get() == 1 ? killed : -1), "the scheduler heard of the failure once");
            assertTrue(ConnectionProbe.railFailures(p.client) == 1);
            assertFalse(p.client.isDisposed());
            for (Subchannel sc : p.client.subchannels()) {
                assertEquals(sc.rail() != killed, sc.isUsable(), "rail " + sc.rail());
            }
            p.drive();
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
            assertEquals(0, p.serverNode.rendezvousPool(true).inUse());
            assertEquals(0, p.clientNode.rendezvousPool(false).inUse());
            // graceful close still works with a dead rail: CLOSE names the live rails
            AtomicBoolean closed = new AtomicBoolean();
            p.server.onClose().subscribe(null, null, () -> closed.set(true));
            p.client.close();
            p.runUntil(closed::get);
        }
    }

    /**
     * Only small messages, so nearly every frame is packed: packed messages are released once copied into
     * their frame, and when a rail dies the frames it had not completed are taken back from its send
     * buffers and their messages sent again. Every rail of 2 and 3, at many points of the stream, by
     * either side's port: each run delivers every message exactly once, in order, byte-exact, and some
     * runs had packed frames in flight on the rail they lost.
     */
    @Test
    void packedFramesInFlightOnAFailedRailAreSentAgainFromTheirSendBuffers() {
        long takenBack = 0;
        int runs = 0;
        for (int rails = 2; rails <= 3; rails++) {
            for (int killed = 0; killed < rails; killed++) {
                for (int passes = 2; passes < 40; passes += 5) {
                    for (boolean serverSide : new boolean[] {true, false}) {
                        takenBack += killPackedStream(rails, killed, passes, serverSide);
                        runs++;
                    }
                }
            }
        }
        assertTrue(takenBack > 0, "no run had a packed frame in flight on the rail it lost (" + runs + " runs)");
    }

    private static byte[] small(int i) {
        byte[] b = new byte[8 + i % 40];
        for (int k = 0; k < b.length; k++) {
            b[k] = (byte) (i * 31 + k);
        }
        return b;
    }

    /** @return messages taken back from packed frames of the killed rail */
    private long killPackedStream(int rails, int killed, int passes, boolean serverSide) {
        // one message credit per buffer keeps the stream going for the passes the callers count
        try (InvokerPair p = InvokerPair.open(rails, ConnectionSpec.rails(rails), b -> b.bufferBytes(512).receiveBuffers(16).messageCreditsPerBuffer(1))) {
            int n = 2_000;
            List<Integer> psns = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                psns.add(m.psn());
                assertArrayEquals(small(m.psn()), m.toByteArray(), "PSN " + m.psn());
                m.release();
            });
            AtomicBoolean sent = new AtomicBoolean();
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(small(i)))).subscribe(null, error::set, () -> sent.set(true));
            for (int i = 0; i < passes; i++) {
                p.pass();
            }
            assertTrue(psns.size() < n / 2, "the rail dies mid-stream, not after it");
            SoftPort port = (SoftPort) (serverSide ? p.soft.b() : p.soft.a()).devices().get(0).port(killed + 1);
            port.setState(PortState.DOWN);
            String run = rails + " rails, rail " + killed + " killed after " + passes + " passes on the " + (serverSide ? "server" : "client") + " side";
            for (int step = 0; !(sent.get() && psns.size() == n); step++) {
                assertTrue(error.get() == null, () -> run + ": send failed: " + error.get());
                assertTrue(step < 200_000, () -> run + ": stalled at " + psns.size() + "\n" + ConnectionProbe.describe(p.client));
                if (p.pass() == 0) {
                    p.soft.clock().advance(1_000);
                }
            }
            for (int i = 0; i < n; i++) {
                assertEquals(i, psns.get(i), run + ": exactly once, in PSN order");
            }
            assertTrue(ConnectionProbe.packedFramesSent(p.client) > 0, run + ": small messages travel packed");
            assertTrue(ConnectionProbe.railFailures(p.client) <= 1, run);
            p.drive();
            assertEquals(0, p.serverNode.metrics().buffersOutstanding(), run);
            return ConnectionProbe.packedMessagesTakenBack(p.client);
        }
    }

    @Test
    void theConnectionErrorsOnlyWhenNoRailRemains() {
        try (InvokerPair p = InvokerPair.open(2, ConnectionSpec.rails(2), b -> b.receiveBuffers(4))) {
            p.server.receive().subscribe(RdmaMessage::release, e -> { });
            p.drive();
            ((SoftPort) p.soft.b().devices().get(0).port(2)).setState(PortState.DOWN);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 200).map(i -> RdmaMessage.of(new byte[16]))));
            p.runUntil(() -> sent.completed() && ConnectionProbe.railFailures(p.client) == 1);
            assertFalse(p.client.isDisposed(), "one rail left: still going");
            // the last message must find a credit to reach the dead rail: without traffic nothing detects it
            p.runUntil(() -> ConnectionProbe.sendCreditsHeld(p.client) > 0);
            ((SoftPort) p.soft.b().devices().get(0).port(1)).setState(PortState.DOWN);
            AtomicReference<Throwable> sendError = new AtomicReference<>();
            p.client.send(Flux.just(RdmaMessage.of("last"))).subscribe(null, sendError::set);
            p.runUntil(() -> sendError.get() != null);
            assertInstanceOf(RdmaTransportException.class, sendError.get());
            assertTrue(p.client.isDisposed());
        }
    }
}
