package io.rdmaflux.samples;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.channel.ChannelKind;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How {@code --transport} and {@code --eager} become the connection's channel kinds and the nodes' eager ring. */
class TransportOptionTest {
    @Test
    void withoutTransportEagerKeepsTodaysMeaningAndTheKindsStayTheNodes() {
        assertEquals(new TransportOption.Choice(null, true), TransportOption.parse(null, null, 2));
        assertEquals(new TransportOption.Choice(null, true), TransportOption.parse(null, "on", 2));
        assertEquals(new TransportOption.Choice(null, false), TransportOption.parse(null, "off", 2));
        ConnectionSpec spec = ConnectionSpec.rails(2);
        assertSame(spec, TransportOption.parse(null, "off", 2).apply(spec));
        assertFalse(spec.channelKindsExplicit());
    }

    @Test
    void oneKindSetsEveryRailAndImpliesTheEagerRing() {
        TransportOption.Choice ud = TransportOption.parse("ud", null, 3);
        assertFalse(ud.eager());
        ConnectionSpec spec = ud.apply(ConnectionSpec.rails(3));
        assertTrue(spec.channelKindsExplicit());
        for (int r = 0; r < 3; r++) {
            assertEquals(ChannelKind.RELIABLE_UD, spec.channelKind(r));
        }
        assertEquals(List.of(ChannelKind.RC_SEND_RECV), TransportOption.parse("rc", "off", 1).kinds());
        TransportOption.Choice eager = TransportOption.parse("eager", "on", 1);
        assertTrue(eager.eager());
        assertEquals(ChannelKind.EAGER_RDMA, eager.apply(ConnectionSpec.rails(1)).channelKind(0));
    }

    @Test
    void aListSetsOneKindPerRail() {
        TransportOption.Choice c = TransportOption.parse("eager,ud,rc", null, 3);
        assertTrue(c.eager(), "a rail is eager: the nodes need the ring");
        ConnectionSpec spec = c.apply(ConnectionSpec.rails(3));
        assertEquals(ChannelKind.EAGER_RDMA, spec.channelKind(0));
        assertEquals(ChannelKind.RELIABLE_UD, spec.channelKind(1));
        assertEquals(ChannelKind.RC_SEND_RECV, spec.channelKind(2));
        assertEquals("eager,ud,rc", TransportOption.describe(c.kinds()));
        assertFalse(TransportOption.parse("rc,ud", "off", 2).eager());
        TransportOption.Choice dr = TransportOption.parse("rc-dr,rc", null, 2);
        assertEquals(ChannelKind.RC_DR, dr.apply(ConnectionSpec.rails(2)).channelKind(0));
        assertEquals("rc-dr,rc", TransportOption.describe(dr.kinds()));
    }

    @Test
    void badValuesAndConflictsAreNamed() {
        assertEquals("--transport must be rc, eager, ud or rc-dr (or a comma list of them, one per rail) but it was 'UD'",
            assertThrows(UserError.class, () -> TransportOption.parse("UD", null, 1)).getMessage());
        assertEquals("--transport must be rc, eager, ud or rc-dr (or a comma list of them, one per rail) but one was ''",
            assertThrows(UserError.class, () -> TransportOption.parse("rc,", null, 2)).getMessage());
        assertEquals("--transport gives 2 kinds (rc,ud) for 3 rails; give one kind for every rail or one per rail",
            assertThrows(UserError.class, () -> TransportOption.parse("rc,ud", null, 3)).getMessage());
        assertEquals("--eager on conflicts with --transport rc,ud: no rail is eager; drop --eager or give --transport eager",
            assertThrows(UserError.class, () -> TransportOption.parse("rc,ud", "on", 2)).getMessage());
        assertEquals("--eager off conflicts with --transport eager: a rail is eager; drop --eager off or choose rc/ud/rc-dr for it",
            assertThrows(UserError.class, () -> TransportOption.parse("eager", "off", 1)).getMessage());
        assertEquals("--eager must be on or off but it was 1",
            assertThrows(UserError.class, () -> TransportOption.parse("ud", "1", 1)).getMessage());
        assertNull(TransportOption.parse(null, null, 1).kinds());
    }
}
