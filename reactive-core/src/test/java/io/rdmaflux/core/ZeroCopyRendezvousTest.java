package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.verbs.MemoryRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Large messages sent by reference through the node's registration cache (seed 001 &sect;3.1's pin-down
 * cache; seed 000 &sect;5.1) by the WRITE and the READ rendezvous (seed 001 &sect;3), over 1 and 2 rails
 * striped (seed 000 &sect;4.3), in virtual time on the in-JVM fabric.
 */
class ZeroCopyRendezvousTest {
    private static final int BUFFER_BYTES = 1024;
    private static final int MAX_MESSAGE = 64 * 1024;

    private static InvokerPair pair(int rails, RendezvousMode mode, AtomicReference<RendezvousTest.RecordingStriper> serverStriper,
                                    java.util.function.Consumer<RdmaNode.Builder> more) {
        ChannelFactory client = RendezvousTest.RecordingStriper::new;
        ChannelFactory server = subchannels -> {
            RendezvousTest.RecordingStriper s = new RendezvousTest.RecordingStriper(subchannels);
            serverStriper.set(s);
            return s;
        };
        return InvokerPair.open(rails, ConnectionSpec.rails(rails).striping(client).rendezvous(mode), b -> {
            b.bufferBytes(BUFFER_BYTES).receiveBuffers(8).maxMessageBytes(MAX_MESSAGE).rendezvousBuffers(2).acceptChannelFactory(server);
            more.accept(b);
        });
    }

    private static ByteBuffer direct(int length, int seed) {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        b.put(RendezvousTest.pattern(length, seed)).clear();
        return b;
    }

    private static List<byte[]> receiveAll(InvokerPair p) {
        List<byte[]> got = new ArrayList<>();
        p.server.receive().subscribe(m -> {
            got.add(m.toByteArray());
            m.release();
        });
        return got;
    }

    @ParameterizedTest(name = "{0}, {1} rails")
    @CsvSource({"WRITE, 1", "WRITE, 2", "READ, 1", "READ, 2", "AUTO, 2"})
    void directBufferMessagesGoByReferenceFromTheSameAndFromRotatingBuffers(RendezvousMode mode, int rails) {
        AtomicReference<RendezvousTest.RecordingStriper> serverStriper = new AtomicReference<>();
        try (InvokerPair p = pair(rails, mode, serverStriper, b -> { })) {
            RendezvousMode agreed = mode == RendezvousMode.AUTO ? RendezvousMode.AUTO : mode;
            assertEquals(agreed, p.client.rendezvousMode());
            assertEquals(agreed, p.server.rendezvousMode(), "the connecting side's mode, both directions");
            ByteBuffer same = direct(MAX_MESSAGE, 1);
            ByteBuffer[] rotating = {direct(MAX_MESSAGE, 2), direct(MAX_MESSAGE, 3), direct(MAX_MESSAGE, 4)};
            List<ByteBuffer> order = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                order.add(same);
            }
            for (int i = 0; i < 6; i++) {
                order.add(rotating[i % 3]);
            }
            // a slice of the same buffer hits its registration by containment
            order.add(same.slice(1000, 30_000));
            List<byte[]> got = receiveAll(p);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.fromIterable(order).map(RdmaMessage::of)));
            p.runUntil(() -> sent.completed() && got.size() == order.size());
            assertTrue(sent.error() == null, () -> "send failed: " + sent.error());
            for (int i = 0; i < order.size(); i++) {
                byte[] expected = new byte[order.get(i).remaining()];
                order.get(i).duplicate().get(expected);
                assertArrayEquals(expected, got.get(i), "message " + i);
            }
            RegistrationCacheStats stats = p.clientNode.registrationCacheStats();
            assertEquals(4, stats.misses(), "one registration per buffer: " + stats);
            assertEquals(order.size() - 4, stats.hits(), "every other send hit: " + stats);
            assertEquals(0, stats.bypasses(), "nothing staged: " + stats);
            assertEquals(0, stats.pinnedEntries(), "every send completed and unpinned: " + stats);
            assertEquals(4L * MAX_MESSAGE, stats.registeredBytes());
            ConnectionMetrics cm = p.client.metrics();
            ConnectionMetrics sm = p.server.metrics();
            // AUTO reads from AUTO_READ_MIN_BYTES (256 KiB) on: these messages (at most 64 KiB) go by WRITE
            long reads = mode == RendezvousMode.READ ? order.size() : 0;
            assertEquals(reads, cm.framesSent(FrameType.RTS_READ), "RTS_READs");
            assertEquals(reads, sm.framesSent(FrameType.READ_FIN), "one READ_FIN per message read");
            assertEquals(order.size() - reads, sm.framesSent(FrameType.CTS), "CTSs only for the WRITE rendezvous");
            if (rails == 2 && reads > 0) {
                RendezvousTest.RecordingStriper s = serverStriper.get();
                assertTrue(s.askedBytes[0] > 0 && s.askedBytes[1] > 0, "the receiver's READs were striped over both rails");
            }
        }
    }

    @Test
    void autoReadsFromItsThresholdOnAndWriteAndReadAreFixed() {
        assertTrue(RendezvousMode.AUTO.reads(RendezvousMode.AUTO_READ_MIN_BYTES));
        assertFalse(RendezvousMode.AUTO.reads(RendezvousMode.AUTO_READ_MIN_BYTES - 1));
        assertTrue(RendezvousMode.READ.reads(1));
        assertFalse(RendezvousMode.WRITE.reads(Integer.MAX_VALUE));
        assertEquals(RendezvousMode.WRITE, ConnectionSpec.defaults().rendezvousMode(), "WRITE is the default");
        assertEquals(RendezvousMode.READ, ConnectionSpec.rails(2).rendezvous(RendezvousMode.READ).withRails(1).connectTimeoutNs(5).rendezvousMode(),
            "every copy of a spec keeps its mode");
    }

    @ParameterizedTest
    @EnumSource(value = RendezvousMode.class, names = {"WRITE", "READ"})
    void cacheEvictionWhileASendIsInFlightSkipsThePinnedEntryAndTheNextSendWaits(RendezvousMode mode) {
        AtomicReference<RendezvousTest.RecordingStriper> serverStriper = new AtomicReference<>();
        // room for one buffer; one rendezvous buffer at the receiver, so a held message keeps the next one in flight
        try (InvokerPair p = pair(1, mode, serverStriper, b -> b.registrationCacheBytes(MAX_MESSAGE).rendezvousBuffers(1))) {
            ByteBuffer a = direct(MAX_MESSAGE, 1);
            ByteBuffer b = direct(MAX_MESSAGE, 2);
            ByteBuffer c = direct(MAX_MESSAGE, 3);
            List<RdmaMessage> held = new ArrayList<>();
            p.server.receive().subscribe(new HoldingSubscriber(Long.MAX_VALUE, held));
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.just(a, b, c).map(RdmaMessage::of)));
            p.drive();
            assertEquals(1, held.size(), "message 0 arrived and is held: the receiver's one buffer is taken");
            RegistrationCacheStats s = p.clientNode.registrationCacheStats();
            assertEquals(1, s.evictions(), "b's registration evicted a's, unpinned once its send completed: " + s);
            assertEquals(1, s.pinnedEntries(), "b is in flight (RTS sent, no buffer yet): its entry is pinned: " + s);
            assertTrue(s.waits() > 0, "c found only b's pinned entry in the budget and waited: " + s);
            assertEquals(2, s.misses(), "c is not registered yet: " + s);
            assertFalse(sent.completed());
            held.remove(0).release();
            p.runUntil(() -> held.size() == 1);
            held.remove(0).release();
            p.runUntil(() -> sent.completed() && held.size() == 1);
            assertArrayEquals(RendezvousTest.pattern(MAX_MESSAGE, 3), held.get(0).toByteArray(), "c arrived intact");
            held.remove(0).release();
            s = p.clientNode.registrationCacheStats();
            assertEquals(2, s.evictions(), "c evicted b once b's send completed: " + s);
            assertEquals(3, s.misses());
            assertEquals(0, s.pinnedEntries());
            assertEquals(MAX_MESSAGE, s.registeredBytes(), "never above the budget");
            assertTrue(sent.error() == null, () -> "send failed: " + sent.error());
        }
    }

    @ParameterizedTest
    @EnumSource(value = RendezvousMode.class, names = {"WRITE", "READ"})
    void aRegionDeregisteredWhileItsSendIsInFlightStaysRegisteredUntilTheSendCompletes(RendezvousMode mode) {
        AtomicReference<RendezvousTest.RecordingStriper> serverStriper = new AtomicReference<>();
        try (InvokerPair p = pair(1, mode, serverStriper, b -> b.rendezvousBuffers(1))) {
            ByteBuffer memory = direct(2 * MAX_MESSAGE, 5);
            MemoryRegion region = p.clientNode.registerMemory(memory);
            List<RdmaMessage> held = new ArrayList<>();
            p.server.receive().subscribe(new HoldingSubscriber(Long.MAX_VALUE, held));
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.just(
                RdmaMessage.of(region, 0, MAX_MESSAGE), RdmaMessage.of(region, MAX_MESSAGE, MAX_MESSAGE))));
            p.drive();
            assertEquals(1, held.size(), "the second message waits for the receiver's one buffer");
            region.deregister();
            assertFalse(region.isValid(), "invalid for new sends at once");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaMessage.of(region, 0, 10));
            assertTrue(e.getMessage().contains("deregistered"), e.getMessage());
            assertEquals(2L * MAX_MESSAGE, p.clientNode.registrationCacheStats().userBytes(), "still registered: a send pins it");
            held.remove(0).release();
            p.runUntil(() -> sent.completed() && held.size() == 1);
            assertTrue(sent.error() == null, () -> "send failed: " + sent.error());
            byte[] expected = new byte[MAX_MESSAGE];
            memory.get(MAX_MESSAGE, expected);
            assertArrayEquals(expected, held.get(0).toByteArray());
            held.remove(0).release();
            assertEquals(0, p.clientNode.registrationCacheStats().userBytes(), "deregistered once the send completed");
        }
    }

    @Test
    void aZeroBudgetStagesDirectBuffersByACopyAndANegativeOneIsRefused() {
        AtomicReference<RendezvousTest.RecordingStriper> serverStriper = new AtomicReference<>();
        try (InvokerPair p = pair(1, RendezvousMode.READ, serverStriper, b -> b.registrationCacheBytes(0))) {
            ByteBuffer a = direct(MAX_MESSAGE, 7);
            List<byte[]> got = receiveAll(p);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.just(a, a).map(RdmaMessage::of)));
            p.runUntil(() -> sent.completed() && got.size() == 2);
            assertArrayEquals(RendezvousTest.pattern(MAX_MESSAGE, 7), got.get(1));
            RegistrationCacheStats s = p.clientNode.registrationCacheStats();
            assertEquals(2, s.bypasses(), "both staged: " + s);
            assertEquals(0, s.misses() + s.hits() + s.registeredBytes(), "nothing registered: " + s);
            assertEquals(2, p.client.metrics().framesSent(FrameType.RTS_READ), "the READ rendezvous reads the staging slot");
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder().registrationCacheBytes(-5));
        assertTrue(e.getMessage().contains("-5") && e.getMessage().contains("0 turns the registration cache off"), e.getMessage());
    }

    @Test
    void heapBuffersAreStagedAndRefusedWhereDirectMemoryIsNeeded() {
        AtomicReference<RendezvousTest.RecordingStriper> serverStriper = new AtomicReference<>();
        try (InvokerPair p = pair(1, RendezvousMode.WRITE, serverStriper, b -> { })) {
            ByteBuffer heap = ByteBuffer.wrap(RendezvousTest.pattern(MAX_MESSAGE, 9));
            List<byte[]> got = receiveAll(p);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.just(RdmaMessage.of(heap))));
            p.runUntil(() -> sent.completed() && got.size() == 1);
            assertArrayEquals(RendezvousTest.pattern(MAX_MESSAGE, 9), got.get(0));
            assertEquals(0, p.clientNode.registrationCacheStats().misses(), "a heap buffer is never registered");
            ByteBuffer readOnly = direct(MAX_MESSAGE, 10).asReadOnlyBuffer();
            SendOutcome ro = SendOutcome.of(p.client.send(Flux.just(RdmaMessage.of(readOnly))));
            p.runUntil(() -> ro.completed() && got.size() == 2);
            assertArrayEquals(RendezvousTest.pattern(MAX_MESSAGE, 10), got.get(1), "a read-only direct buffer is staged by a copy");
            assertEquals(1, p.clientNode.registrationCacheStats().bypasses());
            IllegalArgumentException reg = assertThrows(IllegalArgumentException.class, () -> p.clientNode.registerMemory(heap));
            assertTrue(reg.getMessage().contains("allocateDirect"), reg.getMessage());
            IllegalArgumentException inv = assertThrows(IllegalArgumentException.class, () -> p.clientNode.invalidateRegistrations(heap));
            assertTrue(inv.getMessage().contains("heap buffers are never registered"), inv.getMessage());
        }
    }

    @Test
    void invalidationDropsTheCachedRegistrationAndTheNextSendRegistersAgain() {
        AtomicReference<RendezvousTest.RecordingStriper> serverStriper = new AtomicReference<>();
        try (InvokerPair p = pair(1, RendezvousMode.READ, serverStriper, b -> { })) {
            ByteBuffer a = direct(MAX_MESSAGE, 11);
            List<byte[]> got = receiveAll(p);
            SendOutcome first = SendOutcome.of(p.client.send(Flux.just(RdmaMessage.of(a))));
            p.runUntil(() -> first.completed() && got.size() == 1);
            assertEquals(1, p.clientNode.invalidateRegistrations(a));
            assertEquals(0, p.clientNode.registrationCacheStats().registeredBytes());
            a.put(0, (byte) 42);
            SendOutcome second = SendOutcome.of(p.client.send(Flux.just(RdmaMessage.of(a))));
            p.runUntil(() -> second.completed() && got.size() == 2);
            assertEquals(42, got.get(1)[0]);
            RegistrationCacheStats s = p.clientNode.registrationCacheStats();
            assertEquals(2, s.misses(), s.toString());
            assertEquals(1, s.invalidations(), s.toString());
        }
    }

    @Test
    void nodeCloseReleasesTheCachesRegistrations() {
        AtomicReference<RendezvousTest.RecordingStriper> serverStriper = new AtomicReference<>();
        InvokerPair p = pair(2, RendezvousMode.READ, serverStriper, b -> { });
        RdmaNode node = p.clientNode;
        try (p) {
            ByteBuffer a = direct(MAX_MESSAGE, 13);
            List<byte[]> got = receiveAll(p);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.just(RdmaMessage.of(a))));
            p.runUntil(() -> sent.completed() && got.size() == 1);
            assertEquals(MAX_MESSAGE, node.registrationCacheStats().registeredBytes());
        }
        RegistrationCacheStats s = node.registrationCacheStats();
        assertEquals(0, s.registeredBytes(), "deregistered by the node's close: " + s);
        assertEquals(0, s.entries());
    }
}
