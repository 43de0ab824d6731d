package io.rdmaflux.core;

import io.rdmaflux.core.frame.FrameType;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Credits end to end, counted by frame type in the connections' metrics: they ride piggybacked in the
 * header of any frame going the other way, and an explicit CREDIT frame goes only when a threshold's
 * worth accumulated with no reverse traffic to carry it (DESIGN.md "Credits"; seed 001 &sect;3.1).
 */
class CreditFramesTest {
    private static final int RECEIVE_BUFFERS = 16;
    private static final int THRESHOLD = 4;
    private static final int N = 400;
    /** Longer than half a 256-byte buffer's payload: one message per DATA frame (nothing packs), one buffer credit each. */
    private static final int MESSAGE_BYTES = 150;

    private static InvokerPair pair() {
        return InvokerPair.open(b -> b.bufferBytes(256).receiveBuffers(RECEIVE_BUFFERS).creditThreshold(THRESHOLD));
    }

    private static RdmaMessage message(int i) {
        return RdmaMessage.write(MESSAGE_BYTES, (buf, off, len) -> buf.putInt(off, i));
    }

    /** Subscribes a receiver that counts and releases at once, and lets its first demand grant reach the peer. */
    private static AtomicInteger receiveAll(InvokerPair p, RdmaConnection c) {
        AtomicInteger got = new AtomicInteger();
        c.receive().subscribe(m -> {
            got.incrementAndGet();
            m.release();
        });
        p.drive();
        return got;
    }

    private static long creditFrames(RdmaConnection c) {
        return c.metrics().framesSent(FrameType.CREDIT);
    }

    @Test
    void oneWayTrafficReturnsCreditsInCreditFramesAtMostOnePerThresholdWorth() {
        try (InvokerPair p = pair()) {
            AtomicInteger got = receiveAll(p, p.server);
            long before = creditFrames(p.server);
            Sinks.Many<RdmaMessage> out = Sinks.many().unicast().onBackpressureBuffer();
            SendOutcome sent = SendOutcome.of(p.client.send(out.asFlux()));
            // one message at a time: the sender never runs dry, so only the threshold makes a CREDIT frame go
            for (int i = 0; i < N; i++) {
                out.tryEmitNext(message(i));
                p.drive();
            }
            out.tryEmitComplete();
            p.drive();
            assertTrue(sent.completed(), "the send completed once its messages were delivered");
            assertEquals(N, got.get());
            assertEquals(N, p.client.metrics().framesSent(FrameType.DATA), "one DATA frame per message");
            long credit = creditFrames(p.server) - before;
            assertTrue(credit > 0, "with no reverse traffic the credits need CREDIT frames");
            assertTrue(credit <= N / THRESHOLD, credit + " CREDIT frames returned the credits of " + N + " DATA frames with threshold " + THRESHOLD);
            assertEquals(creditFrames(p.server), p.client.metrics().framesReceived(FrameType.CREDIT), "every CREDIT frame sent arrived");
        }
    }

    @Test
    void aBurstAgainstAFullWindowIsCreditedInFewCreditFrames() {
        try (InvokerPair p = pair()) {
            AtomicInteger got = receiveAll(p, p.server);
            long before = creditFrames(p.server);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, N).map(CreditFramesTest::message)));
            p.runUntil(() -> sent.completed() && got.get() == N);
            long credit = creditFrames(p.server) - before;
            assertTrue(credit > 0 && credit <= N / THRESHOLD, credit + " CREDIT frames for " + N + " DATA frames, threshold " + THRESHOLD);
        }
    }

    @Test
    void twoWayTrafficPiggybacksTheCreditsAndNeedsNoCreditFrames() {
        try (InvokerPair p = pair()) {
            AtomicInteger atServer = receiveAll(p, p.server);
            AtomicInteger atClient = receiveAll(p, p.client);
            long serverBefore = creditFrames(p.server);
            long clientBefore = creditFrames(p.client);
            Sinks.Many<RdmaMessage> fromClient = Sinks.many().unicast().onBackpressureBuffer();
            Sinks.Many<RdmaMessage> fromServer = Sinks.many().unicast().onBackpressureBuffer();
            SendOutcome clientSent = SendOutcome.of(p.client.send(fromClient.asFlux()));
            SendOutcome serverSent = SendOutcome.of(p.server.send(fromServer.asFlux()));
            for (int i = 0; i < N; i++) {
                fromClient.tryEmitNext(message(i));
                fromServer.tryEmitNext(message(i));
                p.drive();
            }
            fromClient.tryEmitComplete();
            fromServer.tryEmitComplete();
            p.drive();
            assertTrue(clientSent.completed(), "the client's send completed");
            assertTrue(serverSent.completed(), "the server's send completed");
            assertEquals(N, atServer.get());
            assertEquals(N, atClient.get());
            assertEquals(N, p.client.metrics().framesSent(FrameType.DATA));
            assertEquals(N, p.server.metrics().framesSent(FrameType.DATA));
            long credit = creditFrames(p.server) - serverBefore + creditFrames(p.client) - clientBefore;
            assertTrue(credit <= 1, credit + " CREDIT frames while " + 2 * N + " DATA frames could carry the credits");
        }
    }
}
