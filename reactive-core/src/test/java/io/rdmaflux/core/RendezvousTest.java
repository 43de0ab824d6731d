package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.core.stripe.StripeEngine;
import io.rdmaflux.core.stripe.StripePolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The zero-copy rendezvous (seed 001 &sect;3: RTS, CTS with rkey, RDMA WRITE, FIN; seed 000 &sect;4.3
 * and &sect;5.3: striped WRITEs landing in place, one FIN per subchannel used) over 1, 2 and 3 rails
 * in virtual time.
 */
class RendezvousTest {
    private static final int BUFFER_BYTES = 1024;
    private static final int MAX_MESSAGE = 256 * 1024;
    private static final int POOL = 4;

    /** Round robin for whole messages; stripes messages of at least 8 KiB with weights 3:1:2:... and records everything. */
    static class RecordingStriper implements SubchannelScheduler {
        final SubchannelScheduler rr;
        final long[] askedBytes;
        final long[] completedBytes;
        final List<long[]> stripes = new ArrayList<>();
        final java.util.Set<Integer> stripedPsns = new java.util.HashSet<>();
        final java.util.Map<Integer, long[]> selected = new java.util.HashMap<>();
        final AtomicInteger messagesCompleted = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        boolean broken;
        /** stripe(..) throws this, as a buggy policy would. */
        RuntimeException throwing;
        /** What {@link #stripeNow} answers. */
        boolean gate = true;
        int stripeNowCalls;

        RecordingStriper(List<? extends Subchannel> subchannels) {
            rr = ChannelFactory.roundRobin().create(subchannels);
            askedBytes = new long[subchannels.size()];
            completedBytes = new long[subchannels.size()];
        }

        @Override
        public int select(int psn, int lengthBytes, Subchannel[] subchannels) {
            int rail = rr.select(psn, lengthBytes, subchannels);
            if (rail >= 0) {
                selected.put(psn, new long[] {rail, lengthBytes});
            }
            return rail;
        }

        @Override
        public long stripeThresholdBytes() {
            return 8 * 1024;
        }

        @Override
        public boolean stripeNow(long nowNs) {
            stripeNowCalls++;
            return gate;
        }

        @Override
        public void stripe(int psn, int lengthBytes, Subchannel[] subchannels, long nowNs, long[] stripeBytes) {
            long total = 0;
            for (int i = 0; i < subchannels.length; i++) {
                if (subchannels[i].isUsable()) {
                    total += weight(i);
                }
            }
            long left = lengthBytes;
            int last = -1;
            for (int i = 0; i < subchannels.length; i++) {
                if (subchannels[i].isUsable()) {
                    stripeBytes[i] = lengthBytes * weight(i) / total;
                    left -= stripeBytes[i];
                    last = i;
                }
            }
            stripeBytes[last] += left;
            if (throwing != null) {
                throw throwing;
            }
            if (broken) {
                stripeBytes[last] += 1;
            }
            for (int i = 0; i < subchannels.length; i++) {
                askedBytes[i] += stripeBytes[i];
            }
            stripedPsns.add(psn);
        }

        private static long weight(int rail) {
            return rail % 2 == 0 ? 3 + rail : 1;
        }

        @Override
        public void onStripeCompleted(Subchannel subchannel, int psn, long offsetBytes, long lengthBytes, long postedNs,
                                      long completedNs) {
            if (stripedPsns.contains(psn)) {
                completedBytes[subchannel.rail()] += lengthBytes;
            }
            stripes.add(new long[] {psn, subchannel.rail(), offsetBytes, lengthBytes, postedNs, completedNs});
        }

        @Override
        public void onMessageCompleted(Subchannel subchannel, int psn, int lengthBytes, long elapsedNs) {
            messagesCompleted.incrementAndGet();
        }

        @Override
        public void onSubchannelFailed(Subchannel subchannel) {
            failures.incrementAndGet();
        }
    }

    private static InvokerPair pair(int rails, AtomicReference<RecordingStriper> striper) {
        ChannelFactory f = subchannels -> {
            RecordingStriper s = new RecordingStriper(subchannels);
            striper.set(s);
            return s;
        };
        return InvokerPair.open(rails, ConnectionSpec.rails(rails).striping(f),
            b -> b.bufferBytes(BUFFER_BYTES).receiveBuffers(8).maxMessageBytes(MAX_MESSAGE).rendezvousBuffers(POOL));
    }

    static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 31 + seed * 7 + (i >>> 8));
        }
        return b;
    }

    @ParameterizedTest(name = "{0} rails")
    @ValueSource(ints = {1, 2, 3})
    void largeMessagesArriveByteExactWithEachRailCarryingTheBytesStripeAskedFor(int rails) {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(rails, striper)) {
            int[] sizes = {MAX_MESSAGE, 100_000, 8 * 1024, 8 * 1024 - 1, 2000, 65_537};
            sendAllAndCheck(p, sizes);
            RecordingStriper s = striper.get();
            assertArrayEquals(s.askedBytes, s.completedBytes, "every stripe stripe() asked for completed, no more");
            long striped = Arrays.stream(s.askedBytes).sum();
            assertEquals(MAX_MESSAGE + 100_000 + 8 * 1024 + 65_537, striped, "messages >= stripeThresholdBytes are striped");
            for (Subchannel sc : p.client.subchannels()) {
                assertTrue(s.askedBytes[sc.rail()] > 0, "rail " + sc.rail() + " carried a stripe");
                // bytes RDMA-written on each rail: exactly the stripes stripe() gave it, plus the unstriped
                // (8 KiB - 1 and 2000-byte) messages written whole on the rail their RTS took
                long expected = s.askedBytes[sc.rail()];
                for (var e : s.selected.entrySet()) {
                    if (!s.stripedPsns.contains(e.getKey()) && e.getValue()[0] == sc.rail()) {
                        expected += e.getValue()[1];
                    }
                }
                assertEquals(expected, sc.bytesSent(), "rail " + sc.rail());
            }
            assertEquals(Arrays.stream(sizes).asLongStream().sum(),
                p.client.subchannels().stream().mapToLong(Subchannel::bytesSent).sum(), "each byte written once, no DATA copy");
            assertEquals(sizes.length, s.messagesCompleted.get(), "the completion filter reports each message once");
            for (long[] st : s.stripes) {
                assertTrue(st[4] <= st[5], "posted before completed");
            }
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    /** A scheduler with a policy of its own for the engine: the weights of {@link RecordingStriper}, and every engine call counted. */
    static final class OwnPolicyStriper extends RecordingStriper implements StripePolicy {
        int splits;
        int hookCalls;
        int carried;
        final long[] postedStripes;
        final long[] completedStripes;
        final long[] completedOnRail;
        StripeEngine engine;

        OwnPolicyStriper(List<? extends Subchannel> subchannels) {
            super(subchannels);
            postedStripes = new long[subchannels.size()];
            completedStripes = new long[subchannels.size()];
            completedOnRail = new long[subchannels.size()];
        }

        @Override
        public StripePolicy stripePolicy() {
            return this;
        }

        @Override
        public void attach(StripeEngine engine) {
            this.engine = engine;
        }

        @Override
        public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
            splits++;
            long left = lengthBytes;
            int last = -1;
            for (int i = 0; i < stripeBytes.length; i++) {
                if ((usableRails & (1L << i)) != 0) {
                    stripeBytes[i] = lengthBytes * (i == 0 ? 3 : 1) / (2 + stripeBytes.length);
                    left -= stripeBytes[i];
                    last = i;
                }
            }
            stripeBytes[last] += left;
        }

        @Override
        public void stripe(int psn, int lengthBytes, Subchannel[] subchannels, long nowNs, long[] stripeBytes) {
            hookCalls++;
            super.stripe(psn, lengthBytes, subchannels, nowNs, stripeBytes);
        }

        @Override
        public void onStripeCompleted(Subchannel subchannel, int psn, long offsetBytes, long lengthBytes, long postedNs,
                                      long completedNs) {
            hookCalls++;
        }

        @Override
        public void onStripePosted(int rail, long lengthBytes, long nowNs) {
            postedStripes[rail]++;
        }

        @Override
        public void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs, boolean railIdleAtPost,
                                      int outstandingOnRail) {
            completedStripes[rail]++;
            completedOnRail[rail] += lengthBytes;
            assertEquals(outstandingOnRail, engine.outstandingOn(rail), "what is left on the rail, as the engine counts it");
        }

        @Override
        public void onMessageCarried(long psn, long carriedOnRails) {
            carried++;
        }

        @Override
        public String name() {
            return "own";
        }
    }

    @Test
    void aSchedulersOwnStripePolicyIsTheEnginesPolicyAndItsHooksAreNotCalled() {
        AtomicReference<OwnPolicyStriper> striper = new AtomicReference<>();
        ChannelFactory f = subchannels -> {
            OwnPolicyStriper s = new OwnPolicyStriper(subchannels);
            striper.set(s);
            return s;
        };
        try (InvokerPair p = InvokerPair.open(2, ConnectionSpec.rails(2).striping(f),
                b -> b.bufferBytes(BUFFER_BYTES).receiveBuffers(8).maxMessageBytes(MAX_MESSAGE).rendezvousBuffers(POOL))) {
            int[] sizes = {MAX_MESSAGE, 100_000, 8 * 1024, 8 * 1024 - 1, 65_537};
            sendAllAndCheck(p, sizes);
            OwnPolicyStriper s = striper.get();
            assertTrue(s.engine != null, "the engine attached itself");
            assertEquals(0, s.hookCalls, "neither stripe nor onStripeCompleted is called when the scheduler has a policy");
            assertEquals(4, s.splits, "one split per message of at least stripeThresholdBytes");
            assertEquals(sizes.length, s.carried, "every rendezvous message, split or whole, passes the completion filter once");
            assertArrayEquals(s.postedStripes, s.completedStripes, "every stripe posted completed");
            for (Subchannel sc : p.client.subchannels()) {
                assertEquals(sc.bytesSent(), s.completedOnRail[sc.rail()], "rail " + sc.rail() + ": every WRITE, whole ones too, is the engine's");
                assertEquals(0, s.engine.backlogBytes(sc.rail()));
            }
            assertEquals(sizes.length, s.messagesCompleted.get());
        }
    }

    @Test
    void aGrantedMessageIsSplitAndWrittenOnlyOnceTheSchedulerSaysStripeNow() {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(2, striper)) {
            RecordingStriper s = striper.get();
            s.gate = false;
            List<byte[]> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.toByteArray());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 3).map(i -> RdmaMessage.of(pattern(100_000, i)))));
            p.drive();
            assertTrue(s.stripeNowCalls > 0, "the connection asked before splitting");
            assertTrue(s.stripedPsns.isEmpty(), "nothing split while stripeNow says no: " + s.stripedPsns);
            assertEquals(0, p.client.subchannels().stream().mapToLong(Subchannel::bytesSent).sum(), "nothing written");
            assertTrue(got.isEmpty());
            assertEquals(3, p.client.metrics().framesReceived(io.rdmaflux.core.frame.FrameType.CTS),
                "the receiver granted all three messages meanwhile: split when posted, not when granted");
            s.gate = true;
            p.runUntil(() -> sent.completed() && got.size() == 3);
            for (int i = 0; i < 3; i++) {
                assertArrayEquals(pattern(100_000, i), got.get(i), "message " + i);
            }
            assertEquals(java.util.Set.of(0, 1, 2), s.stripedPsns.stream().map(psn -> psn - Collections.min(s.stripedPsns))
                .collect(java.util.stream.Collectors.toSet()), "each message split once, after the gate opened");
            assertEquals(3 * 100_000, Arrays.stream(s.askedBytes).sum());
        }
    }

    @ParameterizedTest(name = "{0} rails")
    @ValueSource(ints = {1, 2, 3})
    void smallAndLargeMessagesInterleavedArriveInPsnOrder(int rails) {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(rails, striper)) {
            int n = 120;
            int[] sizes = new int[n];
            java.util.Random r = new java.util.Random(rails);
            for (int i = 0; i < n; i++) {
                sizes[i] = switch (r.nextInt(4)) {
                    case 0 -> 5000 + r.nextInt(60_000);
                    case 1 -> 1001 + r.nextInt(3000);
                    default -> r.nextInt(BUFFER_BYTES - 24);
                };
            }
            List<RdmaMessage> got = new ArrayList<>();
            p.server.receive().subscribe(got::add);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n)
                .map(i -> RdmaMessage.write(sizes[i], (buf, off, len) -> buf.putBytes(off, pattern(len, i))))));
            List<Integer> order = new ArrayList<>();
            for (int step = 0; order.size() < n; step++) {
                assertTrue(step < 10_000, "no progress after " + order.size() + " messages");
                p.pass();
                if (p.pass() == 0) {
                    p.soft.clock().advance(1_000);
                }
                // release out of order: newest first, every other pass
                if (!got.isEmpty() && step % 2 == 0) {
                    RdmaMessage m = got.remove(got.size() - 1);
                    assertArrayEquals(pattern(sizes[m.psn()], m.psn()), m.toByteArray(), "PSN " + m.psn());
                    order.add(m.psn());
                    m.release();
                }
            }
            List<Integer> sorted = new ArrayList<>(order);
            sorted.sort(null);
            for (int i = 0; i < n; i++) {
                assertEquals(i, sorted.get(i), "every PSN exactly once");
            }
            p.drive();
            assertTrue(sent.completed());
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void deliveryOrderFollowsPsnWhenLargeAndSmallMessagesAlternate() {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(3, striper)) {
            List<Integer> psns = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                psns.add(m.psn());
                assertEquals(m.psn() % 2 == 0 ? 50_000 : 10, m.lengthBytes());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 40).map(i -> RdmaMessage.of(new byte[i % 2 == 0 ? 50_000 : 10]))));
            p.runUntil(() -> sent.completed() && psns.size() == 40);
            for (int i = 0; i < 40; i++) {
                assertEquals(i, psns.get(i));
            }
        }
    }

    @Test
    void aStalledConsumerHoldsAtMostThePoolAndTheSenderWaitsWithoutBuffering() {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(2, striper)) {
            List<RdmaMessage> held = new ArrayList<>();
            AtomicInteger emitted = new AtomicInteger();
            HoldingSubscriber sub = new HoldingSubscriber(Long.MAX_VALUE, held);
            p.server.receive().subscribe(sub);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 30).doOnNext(i -> emitted.incrementAndGet())
                .map(i -> RdmaMessage.of(pattern(40_000, i)))));
            for (int i = 0; i < 20; i++) {
                p.drive();
            }
            assertEquals(POOL, held.size(), "the consumer holds every message buffer of the pool, no more arrive");
            assertEquals(POOL, p.serverNode.rendezvousPool(true).inUse());
            assertTrue(p.clientNode.rendezvousPool(false).inUse() <= POOL);
            assertTrue(emitted.get() <= 2 * 8 + 16 + POOL, "publisher held to credits + queue, emitted " + emitted.get());
            assertFalse(sent.completed());
            int next = 0;
            while (next < 30) {
                assertTrue(!held.isEmpty(), "stalled at " + next);
                RdmaMessage m = held.remove(0);
                assertEquals(next, m.psn());
                assertArrayEquals(pattern(40_000, next), m.toByteArray());
                m.release();
                next++;
                p.drive();
                assertTrue(p.serverNode.rendezvousPool(true).inUse() <= POOL);
            }
            assertTrue(sent.completed());
            assertEquals(0, p.serverNode.rendezvousPool(true).inUse());
            assertEquals(0, p.clientNode.rendezvousPool(false).inUse());
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void aPoolOfOneBufferStillDeliversOutOfOrderArrivalsWithoutDeadlock() {
        try (InvokerPair p = InvokerPair.open(3, ConnectionSpec.rails(3),
            b -> b.bufferBytes(BUFFER_BYTES).receiveBuffers(4).maxMessageBytes(MAX_MESSAGE).rendezvousBuffers(1))) {
            List<Integer> psns = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                psns.add(m.psn());
                assertArrayEquals(pattern(m.lengthBytes(), m.psn()), m.toByteArray());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 30).map(i -> RdmaMessage.of(pattern(2000 + 997 * i, i)))));
            p.runUntil(() -> sent.completed() && psns.size() == 30);
            for (int i = 0; i < 30; i++) {
                assertEquals(i, psns.get(i));
            }
        }
    }

    @Test
    void cancellingReceiveWhileRtsWaitsEndsTheSendNamingTheMessagesNotDelivered() {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(2, striper)) {
            List<RdmaMessage> held = new ArrayList<>();
            HoldingSubscriber sub = new HoldingSubscriber(Long.MAX_VALUE, held);
            p.server.receive().subscribe(sub);
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.range(0, 12).map(i -> RdmaMessage.of(new byte[30_000]))).subscribe(null, error::set);
            p.drive();
            assertEquals(POOL, held.size());
            sub.cancel();
            p.drive();
            held.forEach(RdmaMessage::release);
            p.drive();
            // RTSs waiting for a buffer get a discarding CTS, queued messages are not sent: the send ends, not hangs
            ConnectionClosedException e = assertInstanceOf(ConnectionClosedException.class, error.get());
            assertTrue(e.byPeer());
            assertTrue(e.getMessage().startsWith(ConnectionProbe.name(p.client) + ": "), e.getMessage());
            assertTrue(e.getMessage().contains("8 messages of this send() were not delivered")
                && e.getMessage().contains("its subscriber got 4 of them"), e.getMessage());
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
            assertEquals(0, p.serverNode.rendezvousPool(true).inUse());
            assertEquals(0, p.clientNode.rendezvousPool(false).inUse(), "the staging slots of the dropped messages are back");
        }
    }

    @Test
    void aSchedulerSplittingWronglyFailsTheConnectionNamingTheSplit() {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(2, striper)) {
            striper.get().broken = true;
            p.server.receive().subscribe(RdmaMessage::release, e -> { });
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.just(RdmaMessage.of(new byte[20_000]))).subscribe(null, error::set);
            p.runUntil(() -> error.get() != null);
            IllegalStateException e = assertInstanceOf(IllegalStateException.class, error.get());
            assertTrue(e.getMessage().contains("add up to 20001"), e.getMessage());
            assertTrue(p.client.isDisposed());
        }
    }

    @Test
    void aSchedulerThrowingWhileItSplitsFailsTheConnectionNamingItWithItsErrorAsTheCause() {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(2, striper)) {
            IllegalStateException bug = new IllegalStateException("policy bug");
            striper.get().throwing = bug;
            p.server.receive().subscribe(RdmaMessage::release, e -> { });
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.just(RdmaMessage.of(new byte[20_000]))).subscribe(null, error::set);
            p.runUntil(() -> error.get() != null);
            IllegalStateException e = assertInstanceOf(IllegalStateException.class, error.get());
            assertTrue(e.getMessage().contains("threw while splitting PSN 0 of 20000 bytes"), e.getMessage());
            assertSame(bug, e.getCause());
            assertTrue(p.client.isDisposed());
        }
    }

    @Test
    void withRendezvousOffLargeMessagesAreFragmentedAndNoMessageBufferIsRegistered() {
        try (InvokerPair p = InvokerPair.open(b -> b.bufferBytes(BUFFER_BYTES).maxMessageBytes(MAX_MESSAGE).rendezvousBuffers(0))) {
            AtomicReference<byte[]> got = new AtomicReference<>();
            p.server.receive().subscribe(m -> {
                got.set(m.toByteArray());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.just(RdmaMessage.of(pattern(100_000, 3)))));
            p.runUntil(() -> sent.completed() && got.get() != null);
            assertArrayEquals(pattern(100_000, 3), got.get());
        }
    }

    @Test
    void builderRejectsPoolsItCannotRegister() {
        IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder().rendezvousBuffers(65));
        assertTrue(tooMany.getMessage().contains("rendezvousBuffers") && tooMany.getMessage().contains("65"), tooMany.getMessage());
        IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder()
            .maxMessageBytes(1 << 30).rendezvousBuffers(4).build());
        assertTrue(tooBig.getMessage().contains("rendezvousBuffers x maxMessageBytes"), tooBig.getMessage());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder().rendezvousThresholdBytes(-1));
        assertTrue(negative.getMessage().contains("rendezvousThresholdBytes"), negative.getMessage());
    }

    @ParameterizedTest(name = "{0} rails")
    @ValueSource(ints = {1, 3})
    void messagesInRegisteredMemoryAreWrittenWithoutAStagingCopy(int rails) {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(rails, striper)) {
            java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(3 * 100_000);
            io.rdmaflux.verbs.MemoryRegion region = p.clientNode.registerMemory(direct);
            for (int k = 0; k < 3; k++) {
                direct.put(k * 100_000, pattern(100_000, k));
            }
            List<byte[]> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.toByteArray());
                m.release();
            });
            List<RdmaMessage> messages = new ArrayList<>();
            for (int k = 0; k < 3; k++) {
                messages.add(RdmaMessage.of(region, k * 100_000L, 100_000));
            }
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.fromIterable(messages)));
            boolean stagedAny = false;
            for (int i = 0; i < 100_000 && !(sent.completed() && got.size() == 3); i++) {
                if (p.pass() == 0) {
                    p.soft.clock().advance(1_000);
                }
                stagedAny |= p.clientNode.rendezvousPool(false).inUse() > 0;
                if (!sent.completed()) {
                    assertTrue(messages.stream().allMatch(m -> m.refCnt() <= 1), "held by the connection until written");
                }
            }
            assertTrue(sent.completed() && got.size() == 3);
            assertFalse(stagedAny, "no staging slot was used");
            for (int k = 0; k < 3; k++) {
                assertArrayEquals(pattern(100_000, k), got.get(k));
                assertEquals(0, messages.get(k).refCnt(), "released after its stripes completed");
            }
            region.deregister();
        }
    }

    @Test
    void aRegisteredMessageOutsideItsRegionIsRejectedNamingTheRange() {
        try (InvokerPair p = InvokerPair.open()) {
            io.rdmaflux.verbs.MemoryRegion region = p.clientNode.registerMemory(java.nio.ByteBuffer.allocateDirect(1000));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaMessage.of(region, 900, 200));
            assertTrue(e.getMessage().contains("[900, 1100)") && e.getMessage().contains("1000-byte"), e.getMessage());
            IllegalArgumentException heap = assertThrows(IllegalArgumentException.class,
                () -> p.clientNode.registerMemory(java.nio.ByteBuffer.allocate(10)));
            assertTrue(heap.getMessage().contains("direct"), heap.getMessage());
            region.deregister();
            assertThrows(IllegalArgumentException.class, () -> RdmaMessage.of(region, 0, 10));
        }
    }

    @Test
    void aPeerWithRendezvousOffGetsLargeMessagesAsFragments() {
        io.rdmaflux.verbs.testing.SoftTwoNodes soft = io.rdmaflux.verbs.testing.SoftTwoNodes.create(1, io.rdmaflux.verbs.soft.RailConfig.UNSHAPED);
        try (RdmaNode client = RdmaNode.builder().provider(soft.a()).name("client").threadingMode(io.rdmaflux.verbs.ThreadingMode.INVOKER)
                .clock(soft.clock()).driveProvider(false).bufferBytes(BUFFER_BYTES).maxMessageBytes(MAX_MESSAGE).build();
             RdmaNode server = RdmaNode.builder().provider(soft.b()).name("server").threadingMode(io.rdmaflux.verbs.ThreadingMode.INVOKER)
                .clock(soft.clock()).driveProvider(false).bufferBytes(BUFFER_BYTES).maxMessageBytes(MAX_MESSAGE).rendezvousBuffers(0).build()) {
            RdmaServer listener = server.bind(new io.rdmaflux.verbs.PortAddress("mem", soft.b().devices().get(0).name(), 0));
            AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
            AtomicReference<RdmaConnection> connected = new AtomicReference<>();
            listener.accept().subscribe(accepted::set);
            client.connect(listener.address(), ConnectionSpec.defaults()).subscribe(connected::set);
            Runnable pass = () -> {
                if (soft.progress() + client.invoke() + server.invoke() == 0) {
                    soft.clock().advance(1_000);
                }
            };
            for (int i = 0; i < 10_000 && (accepted.get() == null || connected.get() == null); i++) {
                pass.run();
            }
            AtomicReference<byte[]> got = new AtomicReference<>();
            accepted.get().receive().subscribe(m -> {
                got.set(m.toByteArray());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(connected.get().send(Flux.just(RdmaMessage.of(pattern(50_000, 1)))));
            for (int i = 0; i < 100_000 && !(sent.completed() && got.get() != null); i++) {
                pass.run();
            }
            assertTrue(sent.completed(), "send completed");
            assertArrayEquals(pattern(50_000, 1), got.get());
            connected.get().close();
            accepted.get().close();
            for (int i = 0; i < 1000; i++) {
                pass.run();
            }
        } finally {
            soft.close();
        }
    }

    @Test
    void anAbortMidTransferGivesEveryMessageBufferBackOnceTheConnectionIsFreed() {
        AtomicReference<RecordingStriper> striper = new AtomicReference<>();
        try (InvokerPair p = pair(2, striper)) {
            List<RdmaMessage> held = new ArrayList<>();
            p.server.receive().subscribe(held::add, e -> { });
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.range(0, 20).map(i -> RdmaMessage.of(pattern(40_000, i)))).subscribe(null, error::set);
            for (int i = 0; i < 12; i++) {
                p.pass();
            }
            assertTrue(p.clientNode.rendezvousPool(false).inUse() > 0, "large messages were in flight");
            p.client.abort();
            p.runUntil(() -> error.get() != null);
            held.forEach(RdmaMessage::release);
            p.drive();
            assertInstanceOf(ConnectionClosedException.class, error.get());
            assertEquals(0, p.clientNode.rendezvousPool(false).inUse(), "staging slots back");
            assertEquals(0, p.serverNode.rendezvousPool(true).inUse(), "message buffers back");
        }
    }

    /** Sends one message of each size (pattern {@code i}), waits until the send completed and all arrived, checks each byte for byte. */
    private static void sendAllAndCheck(InvokerPair p, int[] sizes) {
        List<byte[]> got = new ArrayList<>();
        p.server.receive().subscribe(m -> {
            got.add(m.toByteArray());
            m.release();
        });
        SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, sizes.length).map(i -> RdmaMessage.of(pattern(sizes[i], i)))));
        p.runUntil(() -> sent.completed() && got.size() == sizes.length);
        for (int i = 0; i < sizes.length; i++) {
            assertArrayEquals(pattern(sizes[i], i), got.get(i), "message " + i);
        }
    }
}
