package io.rdmaflux.ud;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.ud.dr.DrStats;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftPort;
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

/**
 * {@link ChannelKind#RC_DR}: DR's CRC32C and acknowledgement over RC, on the soft fabric in virtual time; the fault it
 * exists for is {@link RailConfig#rcSilentCorruptRate()} (damage the RC transport's ICRC does not see, seed 003 &sect;3.1).
 */
class RcDrChannelTest {
    /** Silent corruption of one frame in 50: damage the RC NIC accepts and places. */
    private static final RailConfig SILENT = RailConfig.builder().rcSilentCorruptRate(0.02).rcFaultSeed(17).build();


    /** What arrived, or the error that ended the transfer. */
    private record Outcome(List<byte[]> got, Throwable error) {
        long intact(List<byte[]> sent) {
            long n = 0;
            for (int i = 0; i < Math.min(sent.size(), got.size()); i++) {
                n += Arrays.equals(sent.get(i), got.get(i)) ? 1 : 0;
            }
            return n;
        }
    }

    private static Outcome transfer(UdPair p, List<byte[]> sent) {
        List<byte[]> got = new ArrayList<>();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> error = new AtomicReference<>();
        p.server.receive().subscribe(m -> {
            got.add(m.toByteArray());
            m.release();
        }, error::set);
        p.client.send(Flux.fromIterable(sent).map(RdmaMessage::of)).subscribe(null, error::set, () -> done.set(true));
        p.await(() -> (done.get() && got.size() == sent.size()) || error.get() != null, 5_000_000);
        return new Outcome(got, error.get());
    }

    private static List<DrStats> stats(RcDrChannelProvider p) {
        return p.openChannels().stream().map(UdChannel::drStats).toList();
    }

    private static long silentlyCorrupted(UdPair p) {
        return ((SoftPort) p.soft.a().devices().get(0).port(1)).rcFramesSilentlyCorrupted()
            + ((SoftPort) p.soft.b().devices().get(0).port(1)).rcFramesSilentlyCorrupted();
    }

    @Test
    void everyRailRunsRcDrAndDeliversInOrder() {
        try (UdPair p = new UdPair(2, RailConfig.UNSHAPED, UdSpec.DEFAULTS, ChannelKind.RC_DR, b -> b)) {
            for (SubchannelSnapshot s : p.client.subchannels()) {
                assertEquals(ChannelKind.RC_DR, s.kind());
            }
            assertEquals(2, p.clientDr.openChannels().size());
            assertEquals(0, p.clientProvider.openChannels().size(), "no UD rail was made");
            List<byte[]> sent = UdPair.payloads(1, 300, 40_000);
            Outcome o = transfer(p, sent);
            assertNull(o.error);
            assertEquals(sent.size(), o.intact(sent));
            long vfrags = stats(p.clientDr).stream().mapToLong(DrStats::vfragsSent).sum();
            assertTrue(vfrags >= 300, "the frames went as DR VFRAGs: " + vfrags);
        }
    }

    /** The fault is real: over plain RC, silently damaged frames reach the application (or break the frame protocol). */
    @Test
    void silentCorruptionGetsThroughPlainRc() {
        try (UdPair p = new UdPair(1, SILENT, UdSpec.DEFAULTS, ChannelKind.RC_SEND_RECV, b -> b)) {
            List<byte[]> sent = UdPair.payloads(2, 400, 6_000);
            Outcome o = transfer(p, sent);
            assertTrue(silentlyCorrupted(p) > 0, "the rail corrupted frames");
            assertTrue(o.error != null || o.intact(sent) < sent.size(),
                "RC delivered " + o.intact(sent) + " of " + sent.size() + " intact with " + silentlyCorrupted(p) + " frames damaged");
        }
    }

    @Test
    void rcDrCatchesEverySilentCorruptionAndRepairsIt() {
        try (UdPair p = new UdPair(1, SILENT, UdSpec.DEFAULTS, ChannelKind.RC_DR, b -> b)) {
            List<byte[]> sent = UdPair.payloads(2, 400, 6_000);
            Outcome o = transfer(p, sent);
            assertNull(o.error, () -> "transfer failed: " + o.error);
            assertEquals(sent.size(), o.got.size());
            assertEquals(sent.size(), o.intact(sent), "every message intact and in order");
            long damaged = silentlyCorrupted(p);
            // a flipped byte in the length field shows as a truncated datagram (malformed), anywhere else as a CRC mismatch
            long caught = stats(p.clientDr).stream().mapToLong(s -> s.corruptedDropped() + s.malformedDropped()).sum()
                + stats(p.serverDr).stream().mapToLong(s -> s.corruptedDropped() + s.malformedDropped()).sum();
            long repaired = stats(p.clientDr).stream().mapToLong(DrStats::vfragsRetransmitted).sum();
            assertTrue(damaged > 0, "the rail corrupted frames");
            assertEquals(damaged, caught, "every damaged datagram dropped by the CRC32C (or length) check");
            assertTrue(repaired > 0, "the damaged VFRAGs were sent again");
        }
    }

    /** Each side's datagram follows its own bufferBytes; the larger side sends no datagram the smaller cannot take. */
    @Test
    void nodesWithDifferentBufferSizesConnect() {
        int[] n = {0};
        try (UdPair p = new UdPair(1, RailConfig.UNSHAPED, UdSpec.DEFAULTS, ChannelKind.RC_DR, b -> b.bufferBytes(n[0]++ == 0 ? 16_384 : 2_048))) {
            List<byte[]> sent = UdPair.payloads(3, 100, 50_000);
            Outcome o = transfer(p, sent);
            assertNull(o.error, () -> "transfer failed: " + o.error);
            assertEquals(sent.size(), o.intact(sent));
        }
    }
}
