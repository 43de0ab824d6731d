package io.rdmaflux.eager;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.verbs.soft.RailConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Eager connections and the progress engine's signal-driven scheduling: a connection whose ring sits in the
 * polling set is visited every duty cycle (the peer's RDMA WRITEs into it complete nothing here), one whose
 * ring is not polled (its peer sends over RC send/receive) is skipped while idle like an RC connection, and
 * comes back as soon as a message reaches it.
 */
class EagerSchedulingTest {
    private static final ConnectionSpec EAGER = ConnectionSpec.defaults().channelKind(ChannelKind.EAGER_RDMA);

    @Test
    void aPolledRingKeepsItsConnectionVisitedAndAnUnpolledOneIsSkippedWhileIdle() {
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> { }, b -> b.eagerPollingSet(1))) {
            List<RdmaConnection[]> cs = new ArrayList<>();
            List<AtomicInteger> got = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                RdmaConnection[] c = bed.connect(EAGER);
                cs.add(c);
                AtomicInteger n = new AtomicInteger();
                got.add(n);
                c[1].receive().subscribe(m -> {
                    n.incrementAndGet();
                    m.release();
                });
            }
            bed.drive();
            for (int i = 0; i < 40; i++) {
                bed.pass();
            }
            assertEquals("POLLING", bed.serverEager.channels().get(0).stats().receiveState(), "the first took the only seat");
            assertFalse(bed.serverNode.skipsWhileIdle(cs.get(0)[1]), "a polled ring's connection is visited every cycle");
            for (int i = 1; i < cs.size(); i++) {
                assertEquals("IDLE", bed.serverEager.channels().get(i).stats().receiveState());
                assertTrue(bed.serverNode.skipsWhileIdle(cs.get(i)[1]), "connection " + i + " (ring not polled) is skipped while idle");
            }
            // a message on a skipped one arrives over RC send/receive and is delivered; then it is skipped again
            AtomicReference<Throwable> err = new AtomicReference<>();
            cs.get(4)[0].send(Flux.just(RdmaMessage.of("over send/receive"))).subscribe(v -> { }, err::set);
            bed.runUntil(() -> got.get(4).get() == 1 || err.get() != null);
            assertNull(err.get());
            assertEquals(1, got.get(4).get());
            for (int i = 0; i < 40; i++) {
                bed.pass();
            }
            assertTrue(bed.serverNode.skipsWhileIdle(cs.get(4)[1]));
            assertThrows(IllegalArgumentException.class, () -> bed.clientNode.skipsWhileIdle(cs.get(0)[1]),
                "a connection of another node");
        }
    }
}
