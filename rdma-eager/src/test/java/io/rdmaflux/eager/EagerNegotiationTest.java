package io.rdmaflux.eager;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.TckPayload;
import io.rdmaflux.verbs.soft.RailConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which kind a rail gets: eager by default where both nodes offer it, RC with a peer that does not, and bad settings. */
class EagerNegotiationTest {
    private static void exchange(EagerBed bed, RdmaConnection[] c) {
        EagerBed.Holder h = new EagerBed.Holder(32, true);
        c[1].receive().subscribe(h);
        h.request(Long.MAX_VALUE);
        AtomicReference<Throwable> err = new AtomicReference<>();
        c[0].send(Flux.range(0, 50).map(i -> TckPayload.message(i, 32))).subscribe(v -> { }, err::set);
        bed.runUntil(() -> h.seqs.size() == 50 || err.get() != null);
        assertNull(err.get());
        assertEquals(java.util.List.of(), h.mismatches);
    }

    @Test
    void railsAreEagerByDefaultWhereBothNodesOfferIt() {
        try (EagerBed bed = EagerBed.open()) {
            RdmaConnection[] c = bed.connect(ConnectionSpec.defaults());
            assertEquals(ChannelKind.EAGER_RDMA, c[0].subchannels().get(0).kind());
            assertEquals(ChannelKind.EAGER_RDMA, c[1].subchannels().get(0).kind());
            exchange(bed, c);
            assertTrue(bed.clientEager.channels().get(0).stats().ringFramesSent() > 0);
        }
    }

    @Test
    void aPeerWithoutEagerDowngradesDefaultRailsToSendRecv() {
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> { }, b -> { }, false)) {
            RdmaConnection[] c = bed.connect(ConnectionSpec.defaults());
            assertEquals(ChannelKind.RC_SEND_RECV, c[0].subchannels().get(0).kind(), "the client's eager rail fell back");
            assertEquals(ChannelKind.RC_SEND_RECV, c[1].subchannels().get(0).kind());
            assertEquals(0, bed.clientEager.channels().size(), "the downgraded eager channel freed its rings");
            exchange(bed, c);
        }
    }

    @Test
    void anExplicitEagerRailIsRefusedByAPeerWithoutItNamingTheKind() {
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> { }, b -> { }, false)) {
            Throwable e = bed.connectFails(ConnectionSpec.defaults().channelKind(ChannelKind.EAGER_RDMA));
            assertTrue(String.valueOf(e.getMessage()).contains("EAGER_RDMA"), e.toString());
            assertEquals(0, bed.clientEager.channels().size(), "the refused connect closed its channels");
        }
    }

    @Test
    void eagerOffInTheSpecOrOnTheNodeUsesSendRecv() {
        try (EagerBed bed = EagerBed.open()) {
            RdmaConnection[] c = bed.connect(ConnectionSpec.defaults().eager(EagerSpec.OFF));
            assertEquals(ChannelKind.RC_SEND_RECV, c[0].subchannels().get(0).kind());
            exchange(bed, c);
        }
        try (EagerBed bed = new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> b.eager(EagerSpec.OFF), b -> { })) {
            RdmaConnection[] c = bed.connect(ConnectionSpec.defaults());
            assertEquals(ChannelKind.RC_SEND_RECV, c[0].subchannels().get(0).kind());
        }
    }

    @Test
    void badSettingsAreRefusedNamingTheValue() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new EagerSpec(true, -1, 16)).getMessage().contains("slotBytes"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new EagerSpec(true, 0, 0)).getMessage().contains("but it was 0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> EagerSpec.slots(5000)).getMessage().contains("5000"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new EagerPolicy(0, 1, 0)).getMessage().contains("checkIntervalNs"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new EagerPolicy(1, 0, 0)).getMessage().contains("promoteAfterMessages"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new EagerPolicy(1, 1, -1)).getMessage().contains("idleNs"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RdmaNode.builder().eagerPollingSet(-1)).getMessage()
            .contains("eagerPollingSet"));
        assertThrows(NullPointerException.class, () -> ConnectionSpec.defaults().eager(null));
    }
}
