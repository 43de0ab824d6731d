package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RdmaNode.Builder#messageCreditsPerBuffer}: a receiver may grant several message credits per free
 * receive buffer (small messages travel packed), which moves the credits-plus-queue bound of a stalled
 * receiver to {@code n * receiveBuffers + sendQueue} and keeps order, byte content and completion, on one
 * rail and on two.
 */
class MessageCreditsPerBufferTest {
    private static final int RECEIVE_BUFFERS = 8;
    private static final int SEND_QUEUE = 4;
    private static final int PER_BUFFER = 4;

    @Test
    void aStalledReceiverLetsTheSenderTakeCreditsPerBufferTimesItsBuffersPlusTheQueue() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS).sendQueue(SEND_QUEUE).messageCreditsPerBuffer(PER_BUFFER))) {
            List<RdmaMessage> held = new ArrayList<>();
            boolean[] stalled = {true};
            List<Integer> got = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                got.add(m.toByteArray()[0] & 0xFF);
                if (stalled[0]) {
                    held.add(m);
                } else {
                    m.release();
                }
            });
            AtomicInteger pulled = new AtomicInteger();
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 2_000).map(i -> {
                pulled.incrementAndGet();
                return RdmaMessage.of(new byte[] {i.byteValue()});
            })));
            p.drive();
            assertEquals(PER_BUFFER * RECEIVE_BUFFERS, held.size(), "the receiver holds " + PER_BUFFER + " messages per buffer");
            assertTrue(pulled.get() <= PER_BUFFER * RECEIVE_BUFFERS + SEND_QUEUE, "pulled " + pulled.get() + " from the source with "
                + PER_BUFFER * RECEIVE_BUFFERS + " message credits and a send queue of " + SEND_QUEUE);
            sent.assertNoError();
            stalled[0] = false;
            held.forEach(RdmaMessage::release);
            p.runUntil(() -> sent.completed() && got.size() == 2_000);
            for (int i = 0; i < 2_000; i++) {
                assertEquals(i & 0xFF, got.get(i), "message " + i);
            }
        }
    }

    @Test
    void aStreamOfSmallMessagesOverTwoRailsArrivesInOrderWithSeveralCreditsPerBuffer() {
        int count = 20_000;
        try (InvokerPair p = InvokerPair.open(2, ConnectionSpec.rails(2),
            b -> b.bufferBytes(1024).receiveBuffers(RECEIVE_BUFFERS).messageCreditsPerBuffer(16))) {
            int[] next = {0};
            AtomicInteger outOfOrder = new AtomicInteger();
            p.server.receive().subscribe(m -> {
                byte[] b = m.toByteArray();
                int v = (b[0] & 0xFF) | (b[1] & 0xFF) << 8 | (b[2] & 0xFF) << 16;
                if (v != next[0]++) {
                    outOfOrder.incrementAndGet();
                }
                m.release();
            });
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, count)
                .map(i -> RdmaMessage.of(new byte[] {(byte) i.intValue(), (byte) (i >> 8), (byte) (i >> 16), 7}))));
            p.runUntil(() -> sent.completed() && next[0] == count);
            sent.assertNoError();
            assertEquals(0, outOfOrder.get(), "messages out of PSN order");
        }
    }

    /** Without the option, a connection of send/receive rails grants 8 message credits per free buffer. */
    @Test
    void byDefaultAStalledReceiverOfSendReceiveRailsHoldsEightSmallMessagesPerBuffer() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS).sendQueue(SEND_QUEUE))) {
            assertEquals(RdmaNode.DEFAULT_MESSAGE_CREDITS_PER_BUFFER, p.serverNode.messageCreditsPerBuffer());
            StalledReceiver r = StalledReceiver.subscribe(p.server);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 1_000).map(i -> RdmaMessage.of(new byte[] {i.byteValue()}))));
            p.drive();
            assertEquals(8 * RECEIVE_BUFFERS, r.held.size(), "8 messages per buffer");
            r.resume();
            p.runUntil(() -> sent.completed() && r.got.get() == 1_000);
            sent.assertNoError();
        }
    }

    @Test
    void messagesPerBufferFollowsTheLengthOfTheLatestMessage() {
        assertEquals(64, SendPipeline.messagesPerBuffer(0, 2048), "at most a packed frame's 64");
        assertEquals(2048 / 36, SendPipeline.messagesPerBuffer(32, 2048), "a 4-byte prefix each");
        assertEquals(1, SendPipeline.messagesPerBuffer(2044, 2048), "fills the frame with its prefix");
        assertEquals(1, SendPipeline.messagesPerBuffer(2048, 2048), "a whole frame");
        assertEquals(1, SendPipeline.messagesPerBuffer(1 << 20, 2048), "fragments or rendezvous: one per buffer credit");
    }

    /**
     * Small messages earn several credits per buffer; messages that fill a buffer after them are taken
     * from the publisher only as the free buffers allow, once the first of them is seen.
     */
    @Test
    void afterSmallMessagesAStalledReceiverHoldsFrameSizeMessagesToItsBuffers() {
        try (InvokerPair p = InvokerPair.open(b -> b.receiveBuffers(RECEIVE_BUFFERS).sendQueue(SEND_QUEUE).messageCreditsPerBuffer(PER_BUFFER))) {
            int frame = p.client.subchannels().get(0).maxFramePayloadBytes();
            StalledReceiver r = StalledReceiver.subscribe(p.server);
            AtomicInteger pulled = new AtomicInteger();
            int small = 10;
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 200).map(i -> {
                pulled.incrementAndGet();
                return RdmaMessage.of(new byte[i < small ? 1 : frame]);
            })));
            p.drive();
            // the small ones share one or two buffers; each large one takes a buffer of its own
            int large = r.held.size() - small;
            assertTrue(large >= RECEIVE_BUFFERS - 2 && large < RECEIVE_BUFFERS, "held " + r.held.size());
            // taken and not sent: the send queue only, not the peer's buffers' worth that the leftover
            // message credits (PER_BUFFER per buffer) would allow
            assertTrue(pulled.get() - r.held.size() <= SEND_QUEUE, "pulled " + pulled.get() + " with " + r.held.size() + " delivered");
            sent.assertNoError();
            r.resume();
            p.runUntil(() -> sent.completed() && r.got.get() == 200);
        }
    }

    @Test
    void creditsPerBufferOutsideOneToSixtyFourIsRejectedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder().messageCreditsPerBuffer(0));
        assertTrue(e.getMessage().contains("messageCreditsPerBuffer in [1, 64] required but it was 0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder().messageCreditsPerBuffer(65));
    }

    /** A receive subscriber that holds every message until {@link #resume()}, then releases them and all later ones. */
    private static final class StalledReceiver {
        final List<RdmaMessage> held = new ArrayList<>();
        final AtomicInteger got = new AtomicInteger();
        private boolean stalled = true;

        static StalledReceiver subscribe(RdmaConnection c) {
            StalledReceiver r = new StalledReceiver();
            c.receive().subscribe(m -> {
                r.got.incrementAndGet();
                if (r.stalled) {
                    r.held.add(m);
                } else {
                    m.release();
                }
            });
            return r;
        }

        void resume() {
            stalled = false;
            held.forEach(RdmaMessage::release);
            held.clear();
        }
    }
}
