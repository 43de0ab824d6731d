package io.rdmaflux.core;

import io.rdmaflux.core.internal.rc.RcSubchannel;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Coalescing: small messages queued for one rail share a packed DATA frame (one work request, one
 * receive buffer); the receiver hands out views of the shared buffer. INVOKER mode, virtual time.
 */
class CoalescingTest {
    private static final int RECEIVE_BUFFERS = 8;

    @Test
    void smallMessagesOfRandomSizesArriveByteExactAndInOrderInPackedFrames() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS).bufferBytes(256))) {
            Random random = new Random(7);
            int n = 3_000;
            byte[][] payloads = new byte[n][];
            for (int i = 0; i < n; i++) {
                payloads[i] = new byte[random.nextInt(60)];
                random.nextBytes(payloads[i]);
            }
            List<byte[]> received = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                received.add(m.toByteArray());
                m.release();
            });
            AtomicBoolean sent = new AtomicBoolean();
            AtomicReference<Throwable> error = new AtomicReference<>();
            p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(payloads[i]))).subscribe(null, error::set, () -> sent.set(true));
            p.runUntil(() -> (sent.get() && received.size() == n) || error.get() != null);
            assertNull(error.get());
            for (int i = 0; i < n; i++) {
                assertArrayEquals(payloads[i], received.get(i), "message " + i);
            }
            long packed = ConnectionProbe.packedFramesSent(p.client);
            assertTrue(packed > 0 && packed < n / 2, "packed frames " + packed + " for " + n + " messages");
            p.drive();
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void messagesHeldAndReleasedOutOfOrderReturnEachBufferWithItsLastMessageWithinTheCreditBound() {
        // one message credit per buffer: the bound checked is the unpacked protocol's (k per buffer: MessageCreditsPerBufferTest)
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS).messageCreditsPerBuffer(1))) {
            int n = 400;
            List<RdmaMessage> held = new ArrayList<>();
            List<Integer> values = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                held.add(m);
                values.add(m.content().getInt(0, ByteOrder.BIG_ENDIAN));
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n)
                .map(i -> RdmaMessage.of(java.nio.ByteBuffer.allocate(4).putInt(0, i).array()))));
            Random random = new Random(11);
            boolean sharedBufferSeen = false;
            for (int round = 0; values.size() < n || !held.isEmpty(); round++) {
                p.drive();
                sent.assertNoError();
                assertTrue(held.size() <= RECEIVE_BUFFERS, "messages held " + held.size() + " beyond the message credits");
                Set<Long> buffers = buffersOf(held);
                assertEquals(buffers.size(), ConnectionProbe.buffersOutstanding(p.server), "receive buffers held by " + held);
                sharedBufferSeen |= buffers.size() < held.size();
                // release a random half, in random order: a buffer returns only with its last message
                int k = held.isEmpty() ? 0 : 1 + random.nextInt(held.size());
                for (int i = 0; i < k; i++) {
                    held.remove(random.nextInt(held.size())).release();
                    p.drive();
                    assertEquals(buffersOf(held).size(), ConnectionProbe.buffersOutstanding(p.server));
                }
                assertTrue(round < 10 * n, "no progress");
            }
            assertTrue(sharedBufferSeen, "no receive buffer carried more than one message");
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                expected.add(i);
            }
            assertEquals(expected, values);
            p.drive();
            assertTrue(sent.completed());
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void packedMessagesAreReleasedOnceCopiedIntoTheirFrameBeforeItsSendCompletes() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS))) {
            List<RdmaMessage> received = new ArrayList<>();
            p.server.receive().subscribe(received::add);
            p.runUntil(() -> ConnectionProbe.sendCreditsHeld(p.client) >= 5);
            List<RdmaMessage> messages = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                messages.add(RdmaMessage.of(new byte[] {(byte) i, 1, 2, 3}));
            }
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.fromIterable(messages)));
            // the client's duty cycles alone (no provider progress: nothing is sent or completed yet) take the
            // send, request the messages and pack them
            for (int i = 0; i < 3 && ConnectionProbe.packedFramesSent(p.client) == 0; i++) {
                p.clientNode.invoke();
            }
            assertEquals(1, ConnectionProbe.packedFramesSent(p.client));
            for (RdmaMessage m : messages) {
                assertEquals(0, m.refCnt(), "released once in the frame: " + m);
            }
            assertFalse(sent.completed(), "no completion yet");
            p.runUntil(() -> sent.completed() && received.size() == 5);
            for (int i = 0; i < 5; i++) {
                assertArrayEquals(new byte[] {(byte) i, 1, 2, 3}, received.get(i).toByteArray());
                received.get(i).release();
            }
        }
    }

    @Test
    void aSubscriberThatReleasesInOnNextKeepsTheViewsInUseFewWhateverTheMessageCount() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(64).sendBuffers(64).bufferBytes(2560))) {
            int n = 20_000;
            AtomicInteger received = new AtomicInteger();
            AtomicInteger wrong = new AtomicInteger();
            p.server.receive().subscribe(m -> {
                if (m.lengthBytes() != 32 || m.content().getInt(0) != m.psn()) {
                    wrong.incrementAndGet();
                }
                m.release();
                received.incrementAndGet();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> {
                byte[] b = new byte[32];
                new org.agrona.concurrent.UnsafeBuffer(b).putInt(0, i);
                return RdmaMessage.of(b);
            })));
            p.runUntil(() -> sent.completed() && received.get() == n);
            assertEquals(0, wrong.get());
            assertTrue(ConnectionProbe.packedFramesSent(p.client) < n / 8, "messages travel packed");
            assertTrue(ConnectionProbe.viewsCreated(p.server) <= io.rdmaflux.core.frame.DataFrameCodec.MAX_PACKED_MESSAGES, ConnectionProbe.viewsCreated(p.server) + " views for " + n + " packed messages");
            p.drive();
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void aFrameWhoseMessagesAreReleasedPartlyInOnNextAndPartlyLaterReturnsItsBufferWithTheLastOne() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS))) {
            int n = 300;
            List<RdmaMessage> held = new ArrayList<>();
            List<Integer> psns = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                psns.add(m.psn());
                if (m.psn() % 3 == 0) {
                    held.add(m);
                } else {
                    m.release();
                }
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(new byte[] {(byte) (int) i}))));
            Random random = new Random(5);
            for (int round = 0; psns.size() < n || !held.isEmpty(); round++) {
                p.drive();
                sent.assertNoError();
                assertEquals(buffersOf(held).size(), ConnectionProbe.buffersOutstanding(p.server), "the buffers of the held messages, no more, no fewer");
                if (!held.isEmpty()) {
                    held.remove(random.nextInt(held.size())).release();
                }
                assertTrue(round < 10 * n, "no progress");
            }
            for (int i = 0; i < n; i++) {
                assertEquals(i, psns.get(i));
            }
            p.drive();
            assertTrue(sent.completed());
            assertTrue(ConnectionProbe.packedFramesSent(p.client) > 0);
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void aSubscriberThatHoldsEachMessageUntilTheNextOneSeesItUnchangedWhileItHoldsIt() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS).bufferBytes(1024))) {
            int n = 2_000;
            AtomicReference<RdmaMessage> previous = new AtomicReference<>();
            AtomicInteger received = new AtomicInteger();
            List<String> wrong = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                RdmaMessage held = previous.getAndSet(m);
                if (m.content().getInt(0) != m.psn()) {
                    wrong.add("PSN " + m.psn() + " arrived as " + m.content().getInt(0));
                }
                if (held != null) {
                    // the view of the held message must not have been lent to this one
                    if (held == m || held.content().getInt(0) != held.psn() || held.psn() != m.psn() - 1) {
                        wrong.add("held PSN " + held.psn() + " reads " + held.content().getInt(0) + " in onNext of PSN " + m.psn());
                    }
                    held.release();
                }
                received.incrementAndGet();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> {
                byte[] b = new byte[4 + i % 13];
                new org.agrona.concurrent.UnsafeBuffer(b).putInt(0, i);
                return RdmaMessage.of(b);
            })));
            p.runUntil(() -> sent.completed() && received.get() == n);
            assertEquals(List.of(), wrong);
            assertTrue(ConnectionProbe.packedFramesSent(p.client) < n / 4, "messages travel packed");
            previous.get().release();
            p.drive();
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void sendsArePostedMostlyUnsignaledAndEveryOneIsRetired() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(64).sendBuffers(64))) {
            int n = 1_000;
            AtomicInteger received = new AtomicInteger();
            p.server.receive().subscribe(m -> {
                m.release();
                received.incrementAndGet();
            });
            // 5000-byte messages: two do not fit one 8 KiB frame, so every message is a frame of its own
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(new byte[5_000]))));
            p.runUntil(() -> sent.completed() && received.get() == n);
            p.drive();
            RcSubchannel sc = ConnectionProbe.channel(p.client, 0);
            assertTrue(sc.sendCompletions() * 2 < sc.sendsPosted(),
                sc.sendCompletions() + " send completions for " + sc.sendsPosted() + " sends");
            assertEquals(0, sc.sendBuffersInUse(), "every send buffer retired");
            assertEquals(0, sc.framesInFlight());
        }
    }

    private static Set<Long> buffersOf(List<RdmaMessage> held) {
        Set<Long> buffers = new HashSet<>();
        for (RdmaMessage m : held) {
            ReceivedMessage r = (ReceivedMessage) m;
            buffers.add(((long) r.subchannel().rail() << 32) | r.slot());
        }
        return buffers;
    }
}
