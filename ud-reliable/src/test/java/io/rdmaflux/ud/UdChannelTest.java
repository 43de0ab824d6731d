package io.rdmaflux.ud;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.ud.dr.DrStats;
import io.rdmaflux.verbs.soft.LossGenerator;
import io.rdmaflux.verbs.soft.RailConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reliable UD connections on the soft fabric with the rail model's UD faults, in virtual time. */
class UdChannelTest {

    private static void transfer(UdPair p, List<byte[]> sent) {
        List<byte[]> got = new ArrayList<>();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> error = new AtomicReference<>();
        p.server.receive().subscribe(m -> {
            got.add(m.toByteArray());
            m.release();
        }, error::set);
        p.client.send(Flux.fromIterable(sent).map(RdmaMessage::of)).subscribe(null, error::set, () -> done.set(true));
        assertTrue(p.await(() -> (done.get() && got.size() == sent.size()) || error.get() != null, 5_000_000),
            () -> "sent " + sent.size() + " received " + got.size() + " stats " + stats(p.clientProvider));
        assertNull(error.get());
        assertEquals(sent.size(), got.size());
        for (int i = 0; i < sent.size(); i++) {
            assertTrue(Arrays.equals(sent.get(i), got.get(i)), "message " + i + " differs");
        }
    }

    private static List<DrStats> stats(UdChannelProvider p) {
        return p.openChannels().stream().map(UdChannel::drStats).toList();
    }

    @Test
    void everyRailRunsReliableUd() {
        try (UdPair p = new UdPair(2, RailConfig.UNSHAPED, UdSpec.DEFAULTS, b -> b)) {
            for (SubchannelSnapshot s : p.client.subchannels()) {
                assertEquals(ChannelKind.RELIABLE_UD, s.kind());
            }
            assertEquals(2, p.clientProvider.openChannels().size());
            transfer(p, UdPair.payloads(1, 200, 20_000));
            long vfrags = stats(p.clientProvider).stream().mapToLong(DrStats::vfragsSent).sum();
            assertTrue(vfrags >= 200, "the frames went as DR VFRAGs: " + vfrags);
        }
    }

    @Test
    void udLossDuplicationReorderAndCorruptionLoseNothing() {
        RailConfig lossy = RailConfig.builder().mtuBytes(2048).loss(LossGenerator.random(0.05, 7)).duplicateRate(0.02)
            .reorderRate(0.05).reorderDelayNs(20_000).corruptRate(0.01).faultSeed(11).build();
        try (UdPair p = new UdPair(1, lossy, UdSpec.DEFAULTS, b -> b)) {
            transfer(p, UdPair.payloads(2, 400, 9_000));
            List<DrStats> tx = stats(p.clientProvider);
            List<DrStats> rx = stats(p.serverProvider);
            assertTrue(tx.stream().mapToLong(DrStats::vfragsRetransmitted).sum() > 0, "loss repaired: " + tx);
            assertTrue(rx.stream().mapToLong(DrStats::duplicatesDropped).sum() > 0, "duplicates dropped: " + rx);
            long corrupted = tx.stream().mapToLong(DrStats::corruptedDropped).sum() + rx.stream().mapToLong(DrStats::corruptedDropped).sum()
                + p.clientProvider.openChannels().get(0).foreignDatagramsDropped() + p.serverProvider.openChannels().get(0).foreignDatagramsDropped();
            assertTrue(corrupted > 0, "corrupted datagrams caught: " + rx);
        }
    }
}
