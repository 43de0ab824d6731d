package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.core.frame.HandshakeCodec;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The channel kind of every rail is asked for by the connecting side's {@link ConnectionSpec} and agreed
 * in the handshake; a kind the accepting node does not know is refused naming it. INVOKER mode.
 */
class ChannelKindNegotiationTest {
    @Test
    void bothSidesReportTheAgreedKindOfEveryRail() {
        try (InvokerPair p = InvokerPair.open(2, ConnectionSpec.rails(2).channelKind(ChannelKind.RC_SEND_RECV), b -> { })) {
            for (RdmaConnection c : List.of(p.client, p.server)) {
                List<SubchannelSnapshot> rails = c.subchannels();
                assertEquals(2, rails.size());
                for (SubchannelSnapshot s : rails) {
                    assertEquals(ChannelKind.RC_SEND_RECV, s.kind());
                    assertEquals(ChannelKind.RC_SEND_RECV.capabilities(), s.kind().capabilities());
                    assertEquals(SubchannelSnapshot.State.USABLE, s.state());
                }
            }
        }
    }

    @Test
    void aPeerAskingForAKindThisNodeDoesNotKnowIsRefusedNamingTheCodeAndTheRail() {
        try (InvokerPair p = InvokerPair.open()) {
            byte[] handshake = new HandshakeCodec(1, 4096, 8, 0, 1 << 20, 0, List.of(9)).encode();
            QpEndpoint bogus = new QpEndpoint(p.client.subchannels().get(0).port().address(), 999_999, 0, 4096);
            CompletableFuture<CmParams> reply = p.soft.a().connectionManager()
                .connect(p.listenAddress(), new CmParams(List.of(bogus), handshake), 5_000_000_000L);
            p.runUntil(reply::isDone);
            ExecutionException e = assertThrows(ExecutionException.class, reply::get);
            assertTrue(e.getCause().getMessage().contains("asks for rail 0: channel kind code 9 is unknown"), e.getCause().getMessage());
        }
    }

    @Test
    void aSpecNamingKindsForAnotherRailCountIsRefusedNamingBoth() {
        IllegalArgumentException kinds = assertThrows(IllegalArgumentException.class,
            () -> ConnectionSpec.rails(2).channelKinds(List.of(ChannelKind.RC_SEND_RECV)));
        assertTrue(kinds.getMessage().contains("1 channel kinds [RC_SEND_RECV] for 2 rails"), kinds.getMessage());
        ConnectionSpec two = ConnectionSpec.rails(2).channelKinds(List.of(ChannelKind.RC_SEND_RECV, ChannelKind.RC_SEND_RECV));
        IllegalArgumentException rails = assertThrows(IllegalArgumentException.class, () -> two.withRails(3));
        assertTrue(rails.getMessage().contains("rails(3) but this spec names the channel kinds of 2 rails"), rails.getMessage());
        assertEquals(ChannelKind.RC_SEND_RECV, two.channelKind(1));
        assertThrows(IndexOutOfBoundsException.class, () -> two.channelKind(2));
        ConnectionSpec oneRail = ConnectionSpec.rails(1).channelKinds(List.of(ChannelKind.RC_SEND_RECV));
        IllegalArgumentException perRail = assertThrows(IllegalArgumentException.class, () -> oneRail.withRails(3));
        assertTrue(perRail.getMessage().contains("rails(3) but this spec names the channel kinds of 1 rails"), perRail.getMessage());
        assertEquals(ChannelKind.RC_SEND_RECV, ConnectionSpec.defaults().channelKind(ChannelKind.RC_SEND_RECV).withRails(3).channelKind(2),
            "channelKind(kind) is every rail's, however many");
        IllegalArgumentException code = assertThrows(IllegalArgumentException.class, () -> ChannelKind.ofWireCode(42));
        assertTrue(code.getMessage().contains("channel kind code 42 is unknown"), code.getMessage());
    }

    @Test
    void aSnapshotOfAFreedRailIsNotUsableAndDoesNotKeepTheChannel() {
        try (InvokerPair p = InvokerPair.open()) {
            SubchannelSnapshot open = p.client.subchannels().get(0);
            assertEquals(SubchannelSnapshot.State.USABLE, open.state());
            p.server.abort();
            p.drive();
            assertTrue(ConnectionProbe.channel(p.client, 0).isClosed(), "the client's rail was freed");
            SubchannelSnapshot freed = p.client.subchannels().get(0);
            assertEquals(SubchannelSnapshot.State.CLOSED, freed.state(), freed.toString());
            assertTrue(!freed.isUsable());
            assertSame(open.identity(), freed.identity(), "one identity per rail");
            assertTrue(open.identity() != ConnectionProbe.channel(p.client, 0), "an opaque token, not the channel");
        }
    }
}
