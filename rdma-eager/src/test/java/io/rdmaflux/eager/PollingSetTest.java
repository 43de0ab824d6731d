package io.rdmaflux.eager;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.TckPayload;
import io.rdmaflux.verbs.soft.RailConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The receiver-managed polling set (seed 001 &sect;4.6), in virtual time: promotion, demotion, races with writes in flight. */
class PollingSetTest {
    private static final ConnectionSpec EAGER = ConnectionSpec.defaults().channelKind(ChannelKind.EAGER_RDMA);

    private static List<Integer> range(int count) {
        List<Integer> l = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            l.add(i);
        }
        return l;
    }

    private static EagerBed.Holder receiveAll(RdmaConnection server, int lengthBytes) {
        EagerBed.Holder h = new EagerBed.Holder(lengthBytes, true);
        server.receive().subscribe(h);
        return h;
    }

    @Test
    void aBusyPeerIsPromotedAndAnIdleOneDemotedAndItsSenderFallsBack() {
        EagerPolicy policy = new EagerPolicy(100_000, 4, 200_000);
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, policy, b -> { }, b -> b.eagerPollingSet(1))) {
            RdmaConnection[] a = bed.connect(EAGER);
            RdmaConnection[] b = bed.connect(EAGER);
            EagerChannel serverA = bed.serverEager.channels().get(0);
            EagerChannel serverB = bed.serverEager.channels().get(1);
            EagerChannel clientA = bed.clientEager.channels().get(0);
            EagerChannel clientB = bed.clientEager.channels().get(1);
            assertEquals("POLLING", serverA.stats().receiveState(), "the first connection took the only seat");
            assertEquals("IDLE", serverB.stats().receiveState());
            assertEquals(1, serverA.pollingSet().size());
            assertEquals(1, serverA.pollingSet().capacity());

            EagerBed.Holder hb = receiveAll(b[1], 32);
            AtomicReference<Throwable> err = new AtomicReference<>();
            int total = 600;
            b[0].send(Flux.range(0, total).map(i -> TckPayload.message(i, 32))).subscribe(v -> { }, err::set);
            // paced demand: B is busy over send/receive for a while, A is idle
            for (int i = 0; i < total / 10; i++) {
                hb.request(10);
                bed.advance(20_000);
            }
            bed.runUntil(() -> hb.seqs.size() == total || err.get() != null);
            assertNull(err.get());
            assertEquals(range(total), hb.seqs);
            assertEquals(List.of(), hb.mismatches);
            assertEquals("IDLE", serverA.stats().receiveState(), "A was idle: demoted " + serverA.stats());
            assertEquals(1, serverA.stats().revokesSent());
            assertTrue(!clientA.stats().sendingToRing(), "A's sender falls back to send/receive");
            assertEquals("POLLING", serverB.stats().receiveState(), "B was busy: promoted " + serverB.stats());
            assertTrue(serverB.stats().fallbackFramesReceived() > 0 && serverB.stats().ringFramesReceived() > 0, serverB.stats().toString());
            assertTrue(clientB.stats().sendingToRing());
        }
    }

    @Test
    void demotionsWhileWritesAreInFlightLoseNothingAndKeepOrder() {
        // idleNs 0: a busy member can be displaced at any check, so seats change hands under full traffic
        EagerPolicy policy = new EagerPolicy(30_000, 2, 0);
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, policy, b -> { }, b -> b.eagerPollingSet(1))) {
            RdmaConnection[] a = bed.connect(EAGER);
            RdmaConnection[] b = bed.connect(EAGER);
            EagerBed.Holder ha = receiveAll(a[1], 48);
            EagerBed.Holder hb = receiveAll(b[1], 48);
            AtomicReference<Throwable> err = new AtomicReference<>();
            int total = 1500;
            a[0].send(Flux.range(0, total).map(i -> TckPayload.message(i, 48))).subscribe(v -> { }, err::set);
            b[0].send(Flux.range(0, total).map(i -> TckPayload.message(i, 48))).subscribe(v -> { }, err::set);
            for (int i = 0; i < total / 5; i++) {
                ha.request(5);
                hb.request(5);
                bed.advance(5_000);
            }
            bed.runUntil(() -> (ha.seqs.size() == total && hb.seqs.size() == total) || err.get() != null);
            assertNull(err.get());
            assertEquals(range(total), ha.seqs);
            assertEquals(range(total), hb.seqs);
            assertEquals(List.of(), ha.mismatches);
            assertEquals(List.of(), hb.mismatches);
            EagerStats sa = bed.serverEager.channels().get(0).stats();
            EagerStats sb = bed.serverEager.channels().get(1).stats();
            assertTrue(sa.revokesSent() + sb.revokesSent() >= 2, "seats changed hands: " + sa + " / " + sb);
            assertTrue(sa.offersSent() >= 2 || sb.offersSent() >= 2, "a demoted ring was promoted again: " + sa + " / " + sb);
            assertTrue(sa.ringFramesReceived() > 0 && sb.ringFramesReceived() > 0, sa + " / " + sb);
        }
    }

    @Test
    void anEmptyPollingSetPollsNoRingAndEverythingGoesOverSendRecv() {
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> { }, b -> b.eagerPollingSet(0))) {
            RdmaConnection[] c = bed.connect(EAGER);
            EagerBed.Holder h = receiveAll(c[1], 32);
            h.request(Long.MAX_VALUE);
            AtomicReference<Throwable> err = new AtomicReference<>();
            c[0].send(Flux.range(0, 100).map(i -> TckPayload.message(i, 32))).subscribe(v -> { }, err::set);
            bed.runUntil(() -> h.seqs.size() == 100 || err.get() != null);
            assertNull(err.get());
            assertEquals(range(100), h.seqs);
            EagerStats server = bed.serverEager.channels().get(0).stats();
            assertEquals("IDLE", server.receiveState());
            assertEquals(0, server.ringFramesReceived());
            assertEquals(0, bed.clientEager.channels().get(0).stats().ringFramesSent());
        }
    }
}
