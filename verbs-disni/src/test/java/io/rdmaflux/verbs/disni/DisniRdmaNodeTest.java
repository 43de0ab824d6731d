package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * RdmaNode end to end on {@code disni} providers over the double: the node's connection manager
 * exchange goes over TCP on loopback addresses ({@link DisniConnectionManager}), its QPs connect through
 * the rdma_cm model, its messages through stateful verb calls. DEDICATED everything, real time.
 */
class DisniRdmaNodeTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void aFluxCrossesFromOneNodeToTheOtherInOrder() throws Exception {
        VerbsLeakCheck leaks = VerbsLeakCheck.begin();
        try (SoftTwoNodes nodes = SoftTwoNodes.create(1, RailConfig.UNSHAPED,
            b -> b.clock(new SystemNanoClock()).threadingMode(ThreadingMode.DEDICATED).minRetryTimeoutNs(DisniDedicatedFixture.REAL_TIME_RETRY_FLOOR_NS))) {
            SoftSeam seam = new SoftSeam(Map.of(DisniSoftFixture.IP_A, nodes.a().devices().get(0),
                DisniSoftFixture.IP_B, nodes.b().devices().get(0)));
            try (DisniProvider pa = open(seam, "na", DisniSoftFixture.IP_A);
                 DisniProvider pb = open(seam, "nb", DisniSoftFixture.IP_B);
                 RdmaNode client = RdmaNode.builder().provider(pa).name("c").ports(1).threadingMode(ThreadingMode.DEDICATED).build();
                 RdmaNode server = RdmaNode.builder().provider(pb).name("s").ports(1).threadingMode(ThreadingMode.DEDICATED).build()) {
                RdmaServer listener = server.bind(new PortAddress(DisniProvider.FABRIC, DisniSoftFixture.IP_B, 0));
                LinkedBlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
                listener.accept().subscribe(accepted::add);
                RdmaConnection c = client.connect(listener.address(), ConnectionSpec.defaults()).block(TIMEOUT);
                RdmaConnection s = accepted.poll(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                assertNotNull(c, "connected");
                assertNotNull(s, "accepted");
                List<String> got = new CopyOnWriteArrayList<>();
                s.receive().subscribe(m -> {
                    try (m) {
                        got.add(m.asString());
                    }
                });
                c.send(Flux.range(0, 500).map(i -> RdmaMessage.of("message " + i))).block(TIMEOUT);
                long until = System.nanoTime() + TIMEOUT.toNanos();
                while (got.size() < 500 && System.nanoTime() < until) {
                    Thread.sleep(5);
                }
                assertEquals(500, got.size());
                for (int i = 0; i < 500; i++) {
                    assertEquals("message " + i, got.get(i));
                }
                c.close();
                listener.close();
            }
            seam.assertAllReleased();
        }
        leaks.assertClean();
    }

    private static DisniProvider open(SoftSeam seam, String name, String ip) {
        return DisniProvider.builder().name(name).seam(seam).options(DisniOptions.parse(Map.of("addresses", ip), List.of())).build();
    }
}
