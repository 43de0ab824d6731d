package io.rdmaflux.core;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.FrameType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Messages longer than one frame with rendezvous off: sent as DATA fragments, each fragment taking one
 * buffer credit of its rail and the message one message credit (credit.MessageCredits), copied out of
 * the receive buffers as they arrive and delivered whole, in PSN order.
 */
class FragmentationTest {
    private static final int BUFFER_BYTES = 256;
    private static final int PAYLOAD = BUFFER_BYTES - FrameHeader.LENGTH;

    private static InvokerPair pair(int receiveBuffers) {
        return InvokerPair.open(b -> b.bufferBytes(BUFFER_BYTES).receiveBuffers(receiveBuffers).rendezvousBuffers(0)
            .maxMessageBytes(8 * PAYLOAD));
    }

    private static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int k = 0; k < length; k++) {
            b[k] = (byte) (seed * 31 + k * 7 + (k >> 8));
        }
        return b;
    }

    private static int fragments(int length) {
        return Math.max(1, (length + PAYLOAD - 1) / PAYLOAD);
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void messagesOfOneToSixFragmentsArriveByteExactInPsnOrder(long seed) {
        Random r = new Random(seed);
        int n = 120;
        int[] sizes = new int[n];
        int multiFragmentFrames = 0;
        int singles = 0;
        for (int i = 0; i < n; i++) {
            sizes[i] = r.nextInt(6 * PAYLOAD + 1);
            if (fragments(sizes[i]) > 1) {
                multiFragmentFrames += fragments(sizes[i]);
            } else {
                singles++;
            }
        }
        int maxFragments = 0;
        for (int s : sizes) {
            maxFragments = Math.max(maxFragments, fragments(s));
        }
        assertEquals(6, maxFragments, "seed " + seed + " spans 1..6 fragments");
        try (InvokerPair p = pair(4)) {
            List<byte[]> got = new ArrayList<>();
            List<Integer> psns = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                psns.add(m.psn());
                got.add(m.toByteArray());
                m.release();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(pattern(sizes[i], i)))));
            p.runUntil(() -> sent.completed() && got.size() == n);
            for (int i = 0; i < n; i++) {
                assertEquals(i, psns.get(i), "delivered in PSN order");
                assertArrayEquals(pattern(sizes[i], i), got.get(i), "message " + i + " of " + sizes[i] + " bytes");
            }
            ConnectionMetrics c = p.client.metrics();
            ConnectionMetrics s = p.server.metrics();
            long data = c.framesSent(FrameType.DATA);
            assertEquals(data, s.framesReceived(FrameType.DATA));
            // every fragment is a frame of its own; only single-frame messages may share a (packed) frame
            assertTrue(data >= multiFragmentFrames + (singles > 0 ? 1 : 0) && data <= multiFragmentFrames + singles,
                data + " DATA frames for " + multiFragmentFrames + " fragments and " + singles + " single-frame messages");
            assertEquals(0, c.framesSent(FrameType.RTS), "rendezvous is off");
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }

    @Test
    void aFiveFragmentMessageCrossesThreeReceiveBuffersOneBufferCreditPerFragment() {
        int receiveBuffers = 3;
        try (InvokerPair p = pair(receiveBuffers)) {
            AtomicReference<byte[]> got = new AtomicReference<>();
            p.server.receive().subscribe(m -> {
                got.set(m.toByteArray());
                m.release();
            });
            p.drive();
            long dataBefore = p.client.metrics().framesSent(FrameType.DATA);
            long creditBefore = p.server.metrics().framesSent(FrameType.CREDIT);
            byte[] big = pattern(4 * PAYLOAD + 100, 9);
            SendOutcome sent = SendOutcome.of(p.client.send(Mono.just(RdmaMessage.of(big))));
            long maxInFlight = 0;
            for (int pass = 0; got.get() == null; pass++) {
                sent.assertNoError();
                assertTrue(pass < 10_000, "the message never arrived");
                if (p.pass() == 0) {
                    p.soft.clock().advance(1_000);
                }
                // a frame sent and not yet taken by the receiver holds one of its receive buffers
                long inFlight = p.client.metrics().framesSent(FrameType.DATA) - p.server.metrics().framesReceived(FrameType.DATA);
                maxInFlight = Math.max(maxInFlight, inFlight);
                assertTrue(inFlight <= receiveBuffers, inFlight + " fragments in flight with " + receiveBuffers + " receive buffers");
                // a fresh snapshot each pass: subchannels() pictures the rail when called
                Subchannel rail = p.client.subchannels().get(0);
                assertTrue(rail.sendCredits() <= receiveBuffers, "credits held " + rail.sendCredits());
            }
            assertArrayEquals(big, got.get());
            sent.assertNoError();
            assertEquals(5, p.client.metrics().framesSent(FrameType.DATA) - dataBefore, "one DATA frame per fragment");
            assertEquals(receiveBuffers, maxInFlight, "the fragments filled the window, then waited for credit");
            assertTrue(p.server.metrics().framesSent(FrameType.CREDIT) > creditBefore,
                "fragments 4 and 5 went on credit the receiver returned while the message was incomplete");
        }
    }

    @Test
    void aStalledSubscriberGetsOnlyTheFragmentedMessagesItAskedFor() {
        int receiveBuffers = 3;
        int n = 6;
        try (InvokerPair p = pair(receiveBuffers)) {
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(pattern(4 * PAYLOAD + 1, i)))));
            List<RdmaMessage> held = new ArrayList<>();
            StepVerifier.create(p.server.receive(), 2)
                .then(() -> {
                    for (int i = 0; i < 20; i++) {
                        p.drive();
                    }
                })
                .consumeNextWith(held::add)
                .consumeNextWith(held::add)
                .then(() -> {
                    // demand 2, both held: the third message may not start however many buffers are free
                    assertEquals(2, p.client.metrics().messagesSent());
                    assertEquals(2 * 5, p.server.metrics().framesReceived(FrameType.DATA));
                    assertEquals(0, p.server.metrics().receiveBuffersHeld(), "fragments are copied out as they arrive");
                    assertEquals(2, p.serverNode.metrics().buffersOutstanding(), "the two whole messages held");
                    assertTrue(p.client.subchannels().get(0).sendCredits() <= receiveBuffers);
                    for (int i = 0; i < 2; i++) {
                        assertArrayEquals(pattern(4 * PAYLOAD + 1, i), held.get(i).toByteArray());
                        held.get(i).release();
                    }
                    held.clear();
                })
                .thenRequest(n - 2)
                .then(p::drive)
                .expectNextCount(0)
                .thenConsumeWhile(m -> {
                    int i = m.psn();
                    assertArrayEquals(pattern(4 * PAYLOAD + 1, i), m.toByteArray());
                    m.release();
                    return i < n - 1;
                })
                .then(() -> assertTrue(sent.completed()))
                .thenCancel()
                .verify();
            assertEquals(n, p.server.metrics().messagesReceived());
        }
    }
}
