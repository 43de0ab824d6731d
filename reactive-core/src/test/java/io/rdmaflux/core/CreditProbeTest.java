package io.rdmaflux.core;

import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.soft.SoftPort;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The zero-credit probe ({@link CreditProbe}): a sender waiting for credit from a peer that died
 * silently finds out; a live peer that only holds back demand is probed, less and less often, and nothing
 * fails. INVOKER mode,
 * virtual time, QP retry timeout 1 ms (the probe interval).
 */
class CreditProbeTest {
    private static final long RETRY_NS = 1_000_000;

    @Test
    void aSenderWaitingForCreditFindsOutThatItsPeerDiedSilently() {
        try (InvokerPair p = InvokerPair.open(b -> b.qpRetryTimeoutNs(RETRY_NS))) {
            Holder held = new Holder();
            p.server.receive().subscribe(held);
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, 10).map(i -> RdmaMessage.of(new byte[] {i.byteValue()}))));
            p.drive();
            assertTrue(!sent.completed(), "waiting for credit");
            long before = p.soft.clock().nanoTime();
            // the peer goes silent with nothing of this side in flight: only a frame from here can tell
            ((SoftPort) p.soft.b().devices().get(0).port(1)).setState(PortState.DOWN);
            for (int step = 0; sent.error() == null; step++) {
                assertTrue(step < 200_000, () -> "the send never failed\n" + ConnectionProbe.describe(p.client));
                if (p.pass() == 0) {
                    p.soft.clock().advance(10_000);
                }
            }
            long elapsedNs = p.soft.clock().nanoTime() - before;
            assertInstanceOf(RdmaTransportException.class, sent.error(), () -> String.valueOf(sent.error()));
            assertTrue(sent.error().getMessage().contains("RETRY_EXC_ERR"), sent.error().getMessage());
            assertTrue(ConnectionProbe.creditProbes(p.client) >= 1, "probed");
            // one interval to the probe, then the QP's 7 retries of one interval each, with slack for the passes
            assertTrue(elapsedNs <= 12 * RETRY_NS, "failed after " + elapsedNs + " ns");
            ((SoftPort) p.soft.b().devices().get(0).port(1)).setState(PortState.ACTIVE);
            held.releaseAll();
        }
    }

    @Test
    void aLivePeerHoldingBackDemandIsProbedAndNothingFails() {
        try (InvokerPair p = InvokerPair.open(b -> b.qpRetryTimeoutNs(RETRY_NS))) {
            Holder held = new Holder();
            p.server.receive().subscribe(held);
            int n = 10;
            SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(new byte[] {i.byteValue()}))));
            long creditFramesBefore = p.client.metrics().framesSent(FrameType.CREDIT);
            for (int i = 0; i < 20_000; i++) {
                if (p.pass() == 0) {
                    p.soft.clock().advance(10_000);
                }
            }
            assertTrue(!sent.completed(), "still waiting, nothing failed");
            // 200 ms of waiting with a 1 ms interval: probes after 1, 3, 7, 15, 31, 63 and 127 ms (each gap doubles)
            long probes = ConnectionProbe.creditProbes(p.client);
            assertEquals(7, probes, "probes back off while the live peer stays silent");
            assertTrue(p.client.metrics().framesSent(FrameType.CREDIT) - creditFramesBefore >= probes, "each probe is a CREDIT frame");
            held.request(n);
            p.drive();
            assertTrue(sent.completed(), "delivered once demand came");
            assertEquals(n, held.messages.size());
            held.releaseAll();
            long after = ConnectionProbe.creditProbes(p.client);
            for (int i = 0; i < 2_000; i++) {
                if (p.pass() == 0) {
                    p.soft.clock().advance(10_000);
                }
            }
            assertEquals(after, ConnectionProbe.creditProbes(p.client), "nothing waits: no probe");
        }
    }

    /** Subscribes with no demand and keeps what it gets. */
    private static final class Holder extends BaseSubscriber<RdmaMessage> {
        final List<RdmaMessage> messages = new ArrayList<>();

        @Override
        protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
        }

        @Override
        protected void hookOnNext(RdmaMessage m) {
            messages.add(m);
        }

        void releaseAll() {
            messages.forEach(RdmaMessage::release);
            messages.clear();
        }
    }
}
