package io.rdmaflux.eager;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.RelayingChannelEvents;
import io.rdmaflux.core.tck.TckPayload;
import io.rdmaflux.verbs.soft.RailConfig;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ring path end to end, in virtual time: arrival, wrap and laps, out-of-order frees, fallback merge, torn writes. */
class EagerRingTest {
    private static final ConnectionSpec EAGER = ConnectionSpec.defaults().channelKind(ChannelKind.EAGER_RDMA);

    private static void send(EagerBed bed, RdmaConnection c, int from, int count, int lengthBytes, AtomicReference<Throwable> error) {
        c.send(Flux.range(from, count).map(i -> TckPayload.message(i, lengthBytes))).subscribe(v -> { }, error::set);
    }

    private static List<Integer> range(int from, int count) {
        List<Integer> l = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            l.add(from + i);
        }
        return l;
    }

    @Test
    void smallMessagesTravelAsOneWriteIntoTheRing() {
        try (EagerBed bed = EagerBed.open()) {
            RdmaConnection[] c = bed.connect(EAGER);
            EagerBed.Holder h = new EagerBed.Holder(64, true);
            c[1].receive().subscribe(h);
            h.request(Long.MAX_VALUE);
            AtomicReference<Throwable> err = new AtomicReference<>();
            send(bed, c[0], 0, 300, 64, err);
            bed.runUntil(() -> h.seqs.size() == 300 || err.get() != null);
            assertNull(err.get());
            assertEquals(range(0, 300), h.seqs);
            assertEquals(List.of(), h.mismatches);
            EagerStats client = bed.clientEager.channels().get(0).stats();
            EagerStats server = bed.serverEager.channels().get(0).stats();
            assertEquals("POLLING", server.receiveState());
            assertTrue(client.sendingToRing());
            assertTrue(client.ringFramesSent() > 0, "frames went through the ring: " + client);
            assertEquals(0, client.fallbackFramesSent(), "the ring had room for everything: " + client);
            assertEquals(client.ringFramesSent(), server.ringFramesReceived());
            assertEquals(0, server.tornSlotsSeen(), "the soft NIC places the tail last: " + server);
        }
    }

    /**
     * A connection with an eager rail grants 8 message credits per buffer by default, as a connection of
     * send/receive rails does, and the option still sets another: with 1 a stream of small messages stays in a 2-slot ring,
     * with the default it puts more packed frames in flight than the ring holds and the overflow goes over
     * send/receive, in order with the ring's frames either way.
     */
    @Test
    void aStreamOfSmallMessagesOverflowsTheRingWithTheDefaultCreditsAndStaysInItWithOnePerBuffer() {
        for (int perBuffer : new int[] {0, 1}) {
            java.util.function.Consumer<io.rdmaflux.core.RdmaNode.Builder> both = perBuffer == 0
                ? b -> b.eager(EagerSpec.slots(2)) : b -> b.eager(EagerSpec.slots(2)).messageCreditsPerBuffer(perBuffer);
            try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, both, b -> { })) {
                RdmaConnection[] c = bed.connect(EAGER);
                assertEquals(perBuffer == 0 ? 8 : perBuffer, bed.serverNode.messageCreditsPerBuffer(), "the most the node grants");
                EagerBed.Holder h = new EagerBed.Holder(16, true);
                c[1].receive().subscribe(h);
                h.request(Long.MAX_VALUE);
                AtomicReference<Throwable> err = new AtomicReference<>();
                send(bed, c[0], 0, 5_000, 16, err);
                bed.runUntil(() -> h.seqs.size() == 5_000 || err.get() != null);
                assertNull(err.get());
                assertEquals(range(0, 5_000), h.seqs);
                EagerStats client = bed.clientEager.channels().get(0).stats();
                if (perBuffer == 1) {
                    assertEquals(0, client.fallbackFramesSent(), "1 credit per buffer: the 2-slot ring had room for every frame: " + client);
                } else {
                    assertTrue(client.fallbackFramesSent() > 0, "8 credits per buffer by default: frames overflowed the ring: " + client);
                }
                assertEquals(0, c[1].metrics().outOfOrder(), "every frame in order: " + client);
            }
        }
    }

    /**
     * Issue 19: a rail whose ring overflows sends part of its frames over send/receive; the receiver takes the
     * ring frames placed before each send/receive frame first, so every frame reaches the connection in the
     * order it was sent and nothing waits in the reorder window, whichever path each took (without that, a
     * SEND completion taken before the ring poll overtook the ring frames before it: 6 240 and 2 565 of the
     * 20 000 messages out of order). Twice: the receiver visited every pass and releasing at once, then
     * visited every fourth pass and releasing half of what it holds in a random order, so that ring slots
     * come free out of order and the NIC places frames of both paths between two visits.
     */
    @Test
    void aRingThatOverflowsDeliversEveryFrameInOrderThroughTheInOrderPath() {
        for (int visitEvery : new int[] {1, 4}) {
            // 64 buffers x 8 credits: some 12 packed frames of 42 messages in flight for a ring of 4 slots
            try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS,
                b -> b.eager(EagerSpec.slots(4)).messageCreditsPerBuffer(8).receiveBuffers(64).sendQueue(512), b -> { })) {
                RdmaConnection[] c = bed.connect(EAGER);
                EagerBed.Holder h = new EagerBed.Holder(16, visitEvery == 1);
                c[1].receive().subscribe(h);
                h.request(Long.MAX_VALUE);
                AtomicReference<Throwable> err = new AtomicReference<>();
                int total = 20_000;
                send(bed, c[0], 0, total, 16, err);
                Random rnd = new Random(19);
                for (int pass = 0; pass < 200_000 && h.seqs.size() < total && err.get() == null; pass++) {
                    int work = bed.soft.progress() + bed.clientNode.invoke();
                    if (pass % visitEvery == 0) {
                        work += bed.serverNode.invoke();
                        // the messages held are released in a random order: ring slots come free out of order
                        Collections.shuffle(h.held, rnd);
                        h.held.subList(0, h.held.size() / 2).forEach(io.rdmaflux.core.RdmaMessage::release);
                        h.held.subList(0, h.held.size() / 2).clear();
                    }
                    if (work == 0) {
                        bed.soft.clock().advance(1_000);
                    }
                }
                h.releaseAll();
                assertNull(err.get());
                assertEquals(total, h.seqs.size(), "all delivered within the passes");
                assertEquals(range(0, total), h.seqs);
                assertEquals(List.of(), h.mismatches);
                EagerChannel serverRail = bed.serverEager.channels().get(0);
                EagerStats server = serverRail.stats();
                String where = "receiver visited every " + visitEvery + " passes: " + server;
                assertTrue(server.ringFramesReceived() > 0 && server.fallbackFramesReceived() > 0, "frames took both paths, " + where);
                assertTrue(serverRail.ringFramesTakenBeforeFallback() > 0, "ring frames placed before a SEND were taken first, " + where);
                assertEquals(0, c[1].metrics().outOfOrder(), "no message waited for an earlier PSN, " + where);
            }
        }
    }

    /**
     * Issue 19, the bound of the drain: when a send/receive frame is handled, exactly the ring frames placed before
     * its SEND (lower PSNs) go first, and the ring frames the NIC placed after it (higher PSNs, already in the ring)
     * wait for it. The receiver is stalled while the sender posts, one message at a time (no packing), three ring
     * frames, one frame too large for the peer's slots (so over send/receive), and three more ring frames; the soft
     * NIC places all seven, then one duty cycle of the receiver reports them. The rail's events must come exactly in
     * PSN order, with the three earlier ring frames and none of the later ones before the send/receive frame.
     */
    @Test
    void aSendReceiveFrameTakesOnlyTheRingFramesPlacedBeforeItsSendFirst() {
        int slots = 16;
        int small = 16;
        int large = 400;
        // slots of 128 bytes: a 16-byte message fits, a 400-byte one (one frame of a 1 KiB buffer) goes over send/receive
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> b.eager(EagerSpec.slots(slots).withSlotBytes(128)),
            b -> { })) {
            RdmaConnection[] c = bed.connect(EAGER);
            List<Integer> seqs = new ArrayList<>();
            List<String> mismatches = new ArrayList<>();
            int warmUp = 5;
            int total = warmUp + 7;
            int largeSeq = warmUp + 3;
            c[1].receive().subscribe(m -> {
                int seq = EagerBed.ByteSeq.seqOf(m);
                seqs.add(seq);
                String bad = TckPayload.mismatch(m, seq, seq == largeSeq ? large : small);
                if (bad != null) {
                    mismatches.add(bad);
                }
                m.release();
            });
            Sinks.Many<RdmaMessage> out = Sinks.many().unicast().onBackpressureBuffer();
            AtomicReference<Throwable> err = new AtomicReference<>();
            c[0].send(out.asFlux()).subscribe(v -> { }, err::set);
            for (int i = 0; i < warmUp; i++) {
                out.tryEmitNext(TckPayload.message(i, small)).orThrow();
            }
            bed.runUntil(() -> seqs.size() == warmUp || err.get() != null);
            bed.drive();
            EagerChannel clientRail = bed.clientEager.channels().get(0);
            EagerChannel serverRail = bed.serverEager.channels().get(0);
            assertTrue(clientRail.stats().sendingToRing(), "the server's ring is offered: " + clientRail.stats());
            long ringSentBefore = clientRail.stats().ringFramesSent();
            long fallbackSentBefore = clientRail.stats().fallbackFramesSent();
            long ringReceivedBefore = serverRail.stats().ringFramesReceived();
            long takenBefore = serverRail.ringFramesTakenBeforeFallback();
            FrameRecorder recorder = new FrameRecorder(serverRail, serverRail.listener(), serverRail.receiveSlots() - slots, largeSeq);
            serverRail.events(recorder);

            // the receiver stalls: only the client node and the soft NICs run while the seven frames are posted and placed
            for (int i = warmUp; i < total; i++) {
                out.tryEmitNext(TckPayload.message(i, i == largeSeq ? large : small)).orThrow();
                for (int pass = 0; pass < 50; pass++) {
                    bed.soft.progress();
                    bed.clientNode.invoke();
                }
            }
            assertEquals(ringSentBefore + 6, clientRail.stats().ringFramesSent(), "six frames went into the ring: " + clientRail.stats());
            assertEquals(fallbackSentBefore + 1, clientRail.stats().fallbackFramesSent(), "one over send/receive: " + clientRail.stats());
            assertEquals(ringReceivedBefore, serverRail.stats().ringFramesReceived(), "the receiver polled nothing yet");
            assertEquals(List.of(), recorder.frames, "the receiver reported nothing yet");

            // one duty cycle of the receiver: the SEND's completion first (EagerChannel.doWork), then the ring
            bed.serverNode.invoke();
            List<String> expected = new ArrayList<>();
            for (int i = warmUp; i < total; i++) {
                expected.add((i == largeSeq ? "send " : "ring ") + i);
            }
            assertEquals(expected, recorder.frames, "the rail's frames in the order they were sent, whichever path they took");
            assertEquals(expected.subList(0, 3), recorder.beforeLarge,
                "reported before the send/receive frame: the ring frames placed before its SEND, and none placed after it");
            List<Integer> psns = recorder.psns;
            for (int i = 1; i < psns.size(); i++) {
                assertEquals(psns.get(0) + i, psns.get(i), "PSNs in order: " + psns);
            }
            assertEquals(takenBefore + 3, serverRail.ringFramesTakenBeforeFallback(), "exactly the three ring frames before the SEND were taken first");

            bed.runUntil(() -> seqs.size() == total || err.get() != null);
            out.tryEmitComplete();
            bed.drive();
            assertNull(err.get());
            assertEquals(range(0, total), seqs);
            assertEquals(List.of(), mismatches);
            assertEquals(List.of(), recorder.packed, "one message at a time: no packed frames");
            assertEquals(0, c[1].metrics().outOfOrder(), "no message waited for an earlier PSN");
        }
    }

    /** Relays a rail's events to the connection, recording each DATA frame's path, payload sequence number and PSN. */
    private static final class FrameRecorder extends RelayingChannelEvents {
        private final ChannelEvents connection;
        private final int firstRingSlot;
        private final int largeSeq;
        final List<String> frames = new ArrayList<>();
        final List<Integer> psns = new ArrayList<>();
        final List<Integer> packed = new ArrayList<>();
        /** {@link #frames} as they were when the frame of {@code largeSeq} was reported. */
        @Nullable List<String> beforeLarge;

        FrameRecorder(EagerChannel rail, @Nullable ChannelEvents connection, int firstRingSlot,
                      int largeSeq) {
            super(rail);
            this.connection = Objects.requireNonNull(connection, "connection");
            this.firstRingSlot = firstRingSlot;
            this.largeSeq = largeSeq;
        }

        @Override
        protected ChannelEvents listener() {
            return connection;
        }

        @Override
        public void onData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength,
                           int psn, boolean first, boolean last, int messageLength) {
            int seq = buffer.getInt(payloadOffset, ByteOrder.BIG_ENDIAN);
            if (seq == largeSeq) {
                beforeLarge = List.copyOf(frames);
            }
            frames.add((slot >= firstRingSlot ? "ring " : "send ") + seq);
            psns.add(psn);
            super.onData(ch, slot, buffer, payloadOffset, payloadLength, psn, first, last, messageLength);
        }

        @Override
        public void onPackedData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn,
                                 int count) {
            packed.add(firstPsn);
            super.onPackedData(ch, slot, buffer, payloadOffset, firstPsn, count);
        }
    }

    @Test
    void ringWrapsOverManyLapsWithAlternatingFlags() {
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> b.eager(EagerSpec.slots(3)), b -> { })) {
            RdmaConnection[] c = bed.connect(EAGER);
            EagerBed.Holder h = new EagerBed.Holder(40, true);
            c[1].receive().subscribe(h);
            AtomicReference<Throwable> err = new AtomicReference<>();
            send(bed, c[0], 0, 200, 40, err);
            // one message at a time: every message a frame of its own, so the 3-slot ring laps 60+ times
            for (int i = 1; i <= 200; i++) {
                h.request(1);
                int n = i;
                bed.runUntil(() -> h.seqs.size() == n || err.get() != null);
            }
            assertNull(err.get());
            assertEquals(range(0, 200), h.seqs);
            assertEquals(List.of(), h.mismatches);
            EagerStats server = bed.serverEager.channels().get(0).stats();
            assertTrue(server.ringFramesReceived() >= 3 * 40, "many laps through 3 slots: " + server);
        }
    }

    @Test
    void slowConsumerHoldingSlotsOutOfOrderIsBoundedAndLosesNothing() {
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> b.eager(EagerSpec.slots(4)), b -> { })) {
            RdmaConnection[] c = bed.connect(EAGER);
            EagerBed.Holder h = new EagerBed.Holder(100, false);
            c[1].receive().subscribe(h);
            AtomicReference<Throwable> err = new AtomicReference<>();
            int total = 240;
            send(bed, c[0], 0, total, 100, err);
            Random rnd = new Random(7);
            int maxHeld = 0;
            while (h.seqs.size() < total && err.get() == null) {
                h.request(6);
                int want = Math.min(total, h.seqs.size() + 6);
                bed.runUntil(() -> h.seqs.size() >= want || err.get() != null);
                maxHeld = Math.max(maxHeld, bed.serverEager.channels().get(0).stats().ringSlotsHeld());
                // release what is held in a random order: ring slots come free out of order
                Collections.shuffle(h.held, rnd);
                h.releaseAll();
                bed.drive();
            }
            assertNull(err.get());
            assertEquals(range(0, total), h.seqs);
            assertEquals(List.of(), h.mismatches);
            EagerStats server = bed.serverEager.channels().get(0).stats();
            assertTrue(maxHeld <= 4, "never more ring slots held than the ring has: " + maxHeld);
            assertTrue(server.ringFramesReceived() > 0 && server.creditsSent() + 0 >= 0, server.toString());
            assertEquals(0, server.ringSlotsHeld());
        }
    }

    @Test
    void fullRingFallsBackToSendRecvAndPsnsFromBothPathsMergeInOrder() {
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> b.eager(EagerSpec.slots(2)), b -> { })) {
            RdmaConnection[] c = bed.connect(EAGER);
            EagerBed.Holder h = new EagerBed.Holder(200, false);
            c[1].receive().subscribe(h);
            h.request(Long.MAX_VALUE);
            AtomicReference<Throwable> err = new AtomicReference<>();
            int total = 400;
            send(bed, c[0], 0, total, 200, err);
            // hold every message for a while: the 2-slot ring fills, the rest goes over send/receive
            for (int round = 0; round < 400 && h.seqs.size() < total; round++) {
                bed.advance(3_000);
                if (h.held.size() >= 12) {
                    h.releaseAll();
                }
            }
            h.releaseAll();
            bed.runUntil(() -> h.seqs.size() == total || err.get() != null);
            assertNull(err.get());
            assertEquals(range(0, total), h.seqs, "one ordered stream from both paths");
            assertEquals(List.of(), h.mismatches);
            EagerStats client = bed.clientEager.channels().get(0).stats();
            EagerStats server = bed.serverEager.channels().get(0).stats();
            assertTrue(server.ringFramesReceived() > 0, "some through the ring: " + server);
            assertTrue(server.fallbackFramesReceived() > 0, "some over send/receive: " + server);
            assertTrue(client.fallbackFramesSent() > 0, client.toString());
        }
    }

    @Test
    void tornWritesAreDetectedAndNeverDelivered() {
        RailConfig torn = RailConfig.builder().tornWrites(true).build();
        try (EagerBed bed = new EagerBed(torn, EagerPolicy.DEFAULTS, b -> { }, b -> { })) {
            RdmaConnection[] c = bed.connect(EAGER);
            EagerBed.Holder h = new EagerBed.Holder(300, true);
            c[1].receive().subscribe(h);
            h.request(Long.MAX_VALUE);
            AtomicReference<Throwable> err = new AtomicReference<>();
            send(bed, c[0], 0, 200, 300, err);
            bed.runUntil(() -> h.seqs.size() == 200 || err.get() != null);
            assertNull(err.get());
            assertEquals(range(0, 200), h.seqs);
            assertEquals(List.of(), h.mismatches, "no torn message delivered");
            EagerStats server = bed.serverEager.channels().get(0).stats();
            assertTrue(server.ringFramesReceived() > 0, server.toString());
            assertTrue(server.tornSlotsSeen() > 0, "the poller saw tails before the rest and waited: " + server);
            assertTrue(((io.rdmaflux.verbs.soft.SoftDevice) bed.soft.b().devices().get(0)).tornWritesPlaced() > 0);
        }
    }

    @Test
    void largeMessagesFragmentOverSendRecvWhileSmallOnesUseTheRing() {
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> b.rendezvousBuffers(0).maxMessageBytes(8192),
            b -> { })) {
            RdmaConnection[] c = bed.connect(EAGER);
            List<Integer> lengths = new ArrayList<>();
            for (int i = 0; i < 120; i++) {
                lengths.add(i % 3 == 0 ? 3000 : 50);
            }
            List<byte[]> got = new ArrayList<>();
            c[1].receive().subscribe(m -> {
                got.add(m.toByteArray());
                m.release();
            });
            AtomicReference<Throwable> err = new AtomicReference<>();
            c[0].send(Flux.range(0, 120).map(i -> TckPayload.message(i, lengths.get(i)))).subscribe(v -> { }, err::set);
            bed.runUntil(() -> got.size() == 120 || err.get() != null);
            assertNull(err.get());
            for (int i = 0; i < 120; i++) {
                assertEquals(java.util.Arrays.toString(TckPayload.bytes(i, lengths.get(i))), java.util.Arrays.toString(got.get(i)), "message " + i);
            }
            EagerStats client = bed.clientEager.channels().get(0).stats();
            assertTrue(client.ringFramesSent() > 0 && client.fallbackFramesSent() > 0, client.toString());
        }
    }
}
