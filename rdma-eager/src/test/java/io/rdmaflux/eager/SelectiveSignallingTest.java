package io.rdmaflux.eager;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.TckPayload;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Selective signalling of ring WRITEs ({@link RingSender}), in virtual time: only every
 * {@code slots / 2}-th WRITE asks for a completion; a frame is reported sent when the peer's credit
 * passes it (request/response: the reply confirms the request) or when its WRITE is retired; when
 * traffic stops with unconfirmed frames, one zero-length signalled WRITE retires them, so a send never
 * waits for traffic that does not come.
 */
class SelectiveSignallingTest {
    private static final ConnectionSpec EAGER = ConnectionSpec.defaults().channelKind(ChannelKind.EAGER_RDMA);

    @Test
    void pingPongSignalsOneWriteInEightAndRepliesConfirmTheRequests() {
        try (EagerBed bed = EagerBed.open()) {
            RdmaConnection[] c = bed.connect(EAGER);
            // the server echoes; the client sends one message at a time and waits for its echo
            c[1].send(c[1].receive().map(m -> {
                RdmaMessage r = RdmaMessage.of(m.toByteArray());
                m.release();
                return r;
            })).subscribe();
            AtomicLong echoed = new AtomicLong();
            c[0].receive().subscribe(m -> {
                m.release();
                echoed.incrementAndGet();
            });
            Sinks.Many<RdmaMessage> sink = Sinks.many().unicast().onBackpressureBuffer();
            AtomicReference<Throwable> err = new AtomicReference<>();
            AtomicBoolean sendDone = new AtomicBoolean();
            c[0].send(sink.asFlux()).subscribe(v -> { }, err::set, () -> sendDone.set(true));
            int n = 64;
            for (int i = 0; i < n; i++) {
                sink.tryEmitNext(TckPayload.message(i, 64));
                long want = i + 1;
                bed.runUntil(() -> echoed.get() == want || err.get() != null);
            }
            assertNull(err.get());
            EagerChannel client = bed.clientEager.channels().get(0);
            EagerStats cs = client.stats();
            assertEquals(n, cs.ringFramesSent(), "every message one ring WRITE: " + cs);
            assertEquals(n / 8, cs.ringWritesSignaled(), "every 8th WRITE of a 16-slot staging ring signalled: " + cs);
            assertEquals(0, cs.ringFlushes(), "the replies' credits confirmed the requests, no flush needed: " + cs);
            // the last request is confirmed by its echo's piggybacked credit: nothing the connection waits for
            assertEquals(0, client.framesInFlight(), "frames in flight after the last echo: " + client);
            sink.tryEmitComplete();
            bed.runUntil(() -> sendDone.get() || err.get() != null);
            assertTrue(sendDone.get());
        }
    }

    @Test
    void oneWayTrafficThatStopsIsRetiredByOneSignalledZeroLengthWrite() {
        try (EagerBed bed = EagerBed.open()) {
            RdmaConnection[] c = bed.connect(EAGER);
            EagerBed.Holder h = new EagerBed.Holder(32, true);
            c[1].receive().subscribe(h);
            h.request(Long.MAX_VALUE);
            AtomicReference<Throwable> err = new AtomicReference<>();
            AtomicBoolean sendDone = new AtomicBoolean();
            // three messages: fewer than the receiver's CREDIT threshold (slots / 4), and no reverse traffic
            c[0].send(Flux.range(0, 3).map(i -> TckPayload.message(i, 32))).subscribe(v -> { }, err::set, () -> sendDone.set(true));
            bed.runUntil(() -> h.seqs.size() == 3 || err.get() != null);
            assertNull(err.get());
            EagerChannel client = bed.clientEager.channels().get(0);
            EagerStats before = client.stats();
            long frames = before.ringFramesSent();
            assertTrue(frames >= 1 && frames <= 3, "the three messages went in one to three ring frames (packed or not): " + before);
            assertEquals(0, before.ringWritesSignaled(), "fewer than eight WRITEs, none signalled: " + before);
            assertEquals(frames, client.framesInFlight(), "no completion and no credit yet: the frames are in flight: " + client);
            assertFalse(sendDone.get(), "the send completes only once its frames are known delivered");
            bed.advance(RingSender.FLUSH_AFTER_NS / 2);
            assertEquals(0, client.stats().ringFlushes(), "no flush before " + RingSender.FLUSH_AFTER_NS + " ns without a WRITE");
            bed.runUntil(() -> sendDone.get() || err.get() != null);
            assertNull(err.get());
            EagerStats after = client.stats();
            assertEquals(1, after.ringFlushes(), "one zero-length signalled WRITE retired the three: " + after);
            assertEquals(0, client.framesInFlight());
            assertEquals(0, client.sendBuffersInUse(), "staging slots retired too: " + client);
        }
    }
}
