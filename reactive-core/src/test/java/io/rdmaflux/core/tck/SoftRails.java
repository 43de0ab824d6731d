package io.rdmaflux.core.tck;

import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.soft.LossGenerator;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftPort;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.jspecify.annotations.Nullable;

/**
 * The rail model a {@link ConnectionTck} pair on the soft provider's in-JVM fabric gives its ports: rail
 * {@code r} (port {@code r + 1}) {@code r x skewNs} slower each way, and the {@link RailFaults} on the RC
 * frames and the UD datagrams every port sends (the RC fault model acts on RC channels, the UD one on
 * reliable UD channels). Each port draws from its own seed (the profile's, the rail and the side), so
 * the two directions and the rails do not lose the same frames.
 */
public final class SoftRails {
    private SoftRails() {
    }

    /** Port of rail {@code rail} (0-based) on the first device of {@code p}. */
    public static SoftPort port(SoftProvider p, int rail) {
        return port(p, rail, false);
    }

    /** Port of rail {@code rail}: port 1 of device {@code rail} when the rails are {@code overDevices}, else {@link #port(SoftProvider, int)}. */
    public static SoftPort port(SoftProvider p, int rail, boolean overDevices) {
        return overDevices ? p.softDevice(rail).softPort(1) : p.softDevice(0).softPort(rail + 1);
    }

    /**
     * Sets the rail model of the first {@code rails} ports of {@code client} and {@code server}: latency
     * {@code r x skewNs} on rail {@code r}, and {@code faults} unless null. Any time: a port applies a new
     * model to the frames it sends next.
     */
    public static void apply(SoftProvider client, SoftProvider server, int rails, long skewNs, @Nullable RailFaults faults) {
        apply(client, server, rails, skewNs, faults, false);
    }

    /** {@link #apply(SoftProvider, SoftProvider, int, long, RailFaults)} with rails over devices ({@link #port(SoftProvider, int, boolean)}). */
    public static void apply(SoftProvider client, SoftProvider server, int rails, long skewNs, @Nullable RailFaults faults,
                             boolean overDevices) {
        for (int r = 0; r < rails; r++) {
            port(client, r, overDevices).setRail(rail(r * Math.max(0, skewNs), faults, r, 0));
            port(server, r, overDevices).setRail(rail(r * Math.max(0, skewNs), faults, r, 1));
        }
    }

    /**
     * Sets the rail model of the first {@code rails} ports of one provider, as {@link #apply} does for side
     * {@code side} (0 client, 1 server; it picks the fault seeds): for a pair whose two ends are in two
     * processes, each end applies its own. {@code faults} null: a fault-free rail.
     */
    public static void applyOne(SoftProvider p, int rails, @Nullable RailFaults faults, int side) {
        for (int r = 0; r < rails; r++) {
            port(p, r).setRail(rail(0, faults, r, side));
        }
    }

    private static RailConfig rail(long latencyNs, @Nullable RailFaults f, int rail, int side) {
        RailConfig.Builder b = RailConfig.builder().latencyNs(latencyNs);
        if (f != null) {
            long seed = f.seed() * 1_000 + rail * 2L + side;
            b.rcLossRate(f.lossRate()).rcDuplicateRate(f.duplicateRate()).rcReorderRate(f.reorderRate())
                .rcReorderDelayNs(f.reorderDelayNs()).rcCorruptRate(f.corruptRate()).rcFaultSeed(seed);
            b.loss(f.lossRate() > 0 ? LossGenerator.random(f.lossRate(), seed) : LossGenerator.none())
                .duplicateRate(f.duplicateRate()).reorderRate(f.reorderRate()).reorderDelayNs(f.reorderDelayNs())
                .corruptRate(f.corruptRate()).faultSeed(seed);
        }
        return b.build();
    }

    /**
     * What the UD fault model did, summed over every port of both sides: datagrams lost, sent twice,
     * held back so later ones overtook them, and delivered with a byte flipped.
     */
    public record UdFaultCounters(long datagramsLost, long datagramsDuplicated, long datagramsReordered, long datagramsCorrupted) {
    }

    /** The UD fault counters of every port of {@code providers}, summed. */
    public static UdFaultCounters udCounters(SoftProvider... providers) {
        long lost = 0;
        long duplicated = 0;
        long reordered = 0;
        long corrupted = 0;
        for (SoftProvider p : providers) {
            for (int d = 0; d < p.devices().size(); d++) {
                for (Port port : p.softDevice(d).ports()) {
                    SoftPort sp = (SoftPort) port;
                    lost += sp.framesLost();
                    duplicated += sp.framesDuplicated();
                    reordered += sp.framesReordered();
                    corrupted += sp.framesCorrupted();
                }
            }
        }
        return new UdFaultCounters(lost, duplicated, reordered, corrupted);
    }

    /** The RC fault and recovery counters of every port and device of {@code providers}, summed. */
    public static RailFaultCounters counters(SoftProvider... providers) {
        long lost = 0;
        long duplicated = 0;
        long reordered = 0;
        long timeouts = 0;
        long naks = 0;
        long duplicateRequests = 0;
        long sequenceNaks = 0;
        long corrupted = 0;
        long icrcDrops = 0;
        for (SoftProvider p : providers) {
            for (int d = 0; d < p.devices().size(); d++) {
                SoftDevice dev = p.softDevice(d);
                timeouts += dev.rcRetransmits();
                naks += dev.rcNakRetransmits();
                duplicateRequests += dev.rcDuplicateRequests();
                sequenceNaks += dev.rcSequenceNaksSent();
                icrcDrops += dev.icrcDrops();
                for (Port port : dev.ports()) {
                    SoftPort sp = (SoftPort) port;
                    lost += sp.rcFramesLost();
                    duplicated += sp.rcFramesDuplicated();
                    reordered += sp.rcFramesReordered();
                    corrupted += sp.rcFramesCorrupted();
                }
            }
        }
        return new RailFaultCounters(lost, duplicated, reordered, timeouts, naks, duplicateRequests, sequenceNaks, corrupted, icrcDrops);
    }
}
