package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.VerbsException;
import org.jspecify.annotations.Nullable;

/**
 * The rail model of one soft port: what the NIC applies to every frame leaving that port.
 *
 * <ul>
 *   <li>{@code bandwidthBytesPerSec}: link rate; {@link Long#MAX_VALUE} means unshaped (no
 *       serialization delay, nothing computed on the hot path).</li>
 *   <li>{@code latencyNs}: one-way latency added to every frame (requests and responses).</li>
 *   <li>{@code mtuBytes}: path MTU in payload bytes, one of 256, 512, 1024, 2048, 4096; UD datagrams
 *       above it fail with LOC_LEN_ERR.</li>
 *   <li>{@code burstBytes}: token bucket depth; how far ahead of the link the NIC may queue frames.</li>
 *   <li>{@code loss}: UD loss model ({@link LossGenerator}).</li>
 *   <li>{@code duplicateRate}, {@code reorderRate}, {@code corruptRate}: UD fault probabilities in
 *       [0, 1], drawn from a generator seeded with {@code faultSeed}; a reordered datagram is held
 *       back {@code reorderDelayNs} so later ones overtake it.</li>
 * </ul>
 *
 * <p>RC traffic sees bandwidth, latency and port state, and by default no random fault: an InfiniBand
 * link layer is lossless (credit based), and RC failure is modelled by port down and dead peers. A
 * lossy link under RC (RoCE without PFC, iWARP over a lossy path) is modelled by the RC fault
 * options, all off by default:
 * <ul>
 *   <li>{@code rcLossRate} or {@code rcLoss}: RC frames lost (seeded random rate, or any
 *       {@link LossGenerator}: fixed gap, multi-gap, burst; {@code rcLoss(LossGenerator.fixedGap(1))}
 *       loses everything).</li>
 *   <li>{@code rcDuplicateRate}: RC frames delivered twice.</li>
 *   <li>{@code rcReorderRate}: RC frames held back {@code rcReorderDelayNs} on the wire, so the frames
 *       sent after them within that time overtake them.</li>
 *   <li>{@code rcCorruptRate}: RC frames corrupted on the wire (a byte flipped in a copy, never in
 *       registered memory); the receiving NIC's ICRC check fails and drops them, as an RC NIC does,
 *       and the requester's retransmission recovers them ({@link RcFaults}).</li>
 *   <li>{@code rcSilentCorruptRate}: RC frames corrupted where the NIC's ICRC does not see it (a byte of
 *       the payload flipped before the ICRC is computed: host memory, the bus, a NIC bug); the frame is
 *       accepted, acknowledged and its wrong bytes placed. What end-to-end checks such as DR's CRC32C
 *       exist for (seed 003 &sect;3.1); RC itself delivers the damage.</li>
 * </ul>
 * They apply to every RC frame the port sends: requests (SEND, RDMA WRITE, READ request) and
 * responses (ACK, NAK, READ response). The draws come from {@code rcFaultSeed} (and the loss
 * generator's own seed) and the delays from the provider's clock, so a run is reproducible, in
 * virtual time too. The requester and responder recover as an RC NIC does, by go-back-N (see
 * {@link SoftQueuePair}); the port counts what it did ({@link SoftPort#rcFramesLost()},
 * {@link SoftPort#rcFramesDuplicated()}, {@link SoftPort#rcFramesReordered()}). A rail without RC
 * faults costs the RC hot path one null check per frame.
 *
 * <p>Immutable; build with {@link #builder()}; every setter value is checked by {@link Builder#build()}
 * ({@link VerbsException} for the link and UD options; {@link IllegalArgumentException} for the RC
 * fault options).
 */
public final class RailConfig {
    /** Unshaped, zero latency, MTU 4096, no faults. */
    public static final RailConfig UNSHAPED = builder().build();

    private final long bandwidthBytesPerSec;
    private final long latencyNs;
    private final int mtuBytes;
    private final long burstBytes;
    private final LossGenerator loss;
    private final double duplicateRate;
    private final double reorderRate;
    private final double corruptRate;
    private final long reorderDelayNs;
    private final long faultSeed;
    private final double rcLossRate;
    private final LossGenerator rcLoss;
    private final double rcDuplicateRate;
    private final double rcReorderRate;
    private final long rcReorderDelayNs;
    private final double rcCorruptRate;
    private final double rcSilentCorruptRate;
    private final long rcFaultSeed;
    private final boolean tornWrites;

    private RailConfig(Builder b) {
        if (b.bandwidthBytesPerSec <= 0) {
            throw new VerbsException("bandwidthBytesPerSec > 0 required but it was " + b.bandwidthBytesPerSec
                + "; use Long.MAX_VALUE for an unshaped rail");
        }
        if (b.latencyNs < 0) {
            throw new VerbsException("latencyNs >= 0 required but it was " + b.latencyNs);
        }
        checkMtu(b.mtuBytes);
        if (b.burstBytes <= 0) {
            throw new VerbsException("burstBytes > 0 required but it was " + b.burstBytes);
        }
        rate("duplicateRate", b.duplicateRate);
        rate("reorderRate", b.reorderRate);
        rate("corruptRate", b.corruptRate);
        if (b.reorderDelayNs <= 0) {
            throw new VerbsException("reorderDelayNs > 0 required but it was " + b.reorderDelayNs);
        }
        this.bandwidthBytesPerSec = b.bandwidthBytesPerSec;
        this.latencyNs = b.latencyNs;
        this.mtuBytes = b.mtuBytes;
        this.burstBytes = b.burstBytes;
        this.loss = b.loss;
        this.duplicateRate = b.duplicateRate;
        this.reorderRate = b.reorderRate;
        this.corruptRate = b.corruptRate;
        this.reorderDelayNs = b.reorderDelayNs;
        this.faultSeed = b.faultSeed;
        this.rcLossRate = probability("rcLossRate", b.rcLossRate);
        this.rcDuplicateRate = probability("rcDuplicateRate", b.rcDuplicateRate);
        this.rcReorderRate = probability("rcReorderRate", b.rcReorderRate);
        if (b.rcReorderDelayNs <= 0) {
            throw new IllegalArgumentException("rcReorderDelayNs > 0 required but it was " + b.rcReorderDelayNs);
        }
        this.rcReorderDelayNs = b.rcReorderDelayNs;
        this.rcCorruptRate = probability("rcCorruptRate", b.rcCorruptRate);
        this.rcSilentCorruptRate = probability("rcSilentCorruptRate", b.rcSilentCorruptRate);
        this.rcFaultSeed = b.rcFaultSeed;
        this.tornWrites = b.tornWrites;
        if (b.rcLoss != null && rcLossRate > 0) {
            throw new IllegalArgumentException("set rcLossRate (" + rcLossRate + ") or rcLoss (" + b.rcLoss
                + "), not both: rcLoss replaces the seeded random model that rcLossRate builds");
        }
        this.rcLoss = b.rcLoss != null ? b.rcLoss
            : rcLossRate > 0 ? LossGenerator.random(rcLossRate, rcFaultSeed) : LossGenerator.none();
    }

    /**
     * Checks an MTU.
     *
     * @throws VerbsException unless it is one of 256, 512, 1024, 2048, 4096
     */
    public static int checkMtu(int mtuBytes) {
        if (mtuBytes != 256 && mtuBytes != 512 && mtuBytes != 1024 && mtuBytes != 2048 && mtuBytes != 4096) {
            throw new VerbsException("mtuBytes must be one of 256, 512, 1024, 2048, 4096 but it was " + mtuBytes);
        }
        return mtuBytes;
    }

    private static void rate(String name, double rate) {
        if (!(rate >= 0.0 && rate <= 1.0)) {
            throw new VerbsException(name + " must be in [0, 1] but it was " + rate);
        }
    }

    private static double probability(String name, double p) {
        if (!(p >= 0.0 && p <= 1.0)) {
            throw new IllegalArgumentException(name + " must be a probability in [0, 1] but it was " + p);
        }
        return p;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.bandwidthBytesPerSec = bandwidthBytesPerSec;
        b.latencyNs = latencyNs;
        b.mtuBytes = mtuBytes;
        b.burstBytes = burstBytes;
        b.loss = loss;
        b.duplicateRate = duplicateRate;
        b.reorderRate = reorderRate;
        b.corruptRate = corruptRate;
        b.reorderDelayNs = reorderDelayNs;
        b.faultSeed = faultSeed;
        b.rcLossRate = rcLossRate;
        b.rcLoss = rcLossRate > 0 || rcLoss instanceof Loss.None ? null : rcLoss;
        b.rcDuplicateRate = rcDuplicateRate;
        b.rcReorderRate = rcReorderRate;
        b.rcReorderDelayNs = rcReorderDelayNs;
        b.rcCorruptRate = rcCorruptRate;
        b.rcSilentCorruptRate = rcSilentCorruptRate;
        b.rcFaultSeed = rcFaultSeed;
        b.tornWrites = tornWrites;
        return b;
    }

    /** Link rate in bytes/s; {@link Long#MAX_VALUE} = unshaped. */
    public long bandwidthBytesPerSec() {
        return bandwidthBytesPerSec;
    }

    /** One-way latency in ns. */
    public long latencyNs() {
        return latencyNs;
    }

    /** Path MTU in payload bytes. */
    public int mtuBytes() {
        return mtuBytes;
    }

    /** Token bucket depth in bytes. */
    public long burstBytes() {
        return burstBytes;
    }

    /** UD loss model (a prototype: each port gets its own {@link LossGenerator#copy()}). */
    public LossGenerator loss() {
        return loss;
    }

    public double duplicateRate() {
        return duplicateRate;
    }

    public double reorderRate() {
        return reorderRate;
    }

    public double corruptRate() {
        return corruptRate;
    }

    /** How long a reordered UD datagram is held back, ns. */
    public long reorderDelayNs() {
        return reorderDelayNs;
    }

    /** Seed of the duplication/reorder/corruption draws. */
    public long faultSeed() {
        return faultSeed;
    }

    /** Probability that an RC frame is lost, when the RC loss model was set with {@code rcLossRate} (else 0). */
    public double rcLossRate() {
        return rcLossRate;
    }

    /**
     * RC loss model (a prototype: each port gets its own {@link LossGenerator#copy()});
     * {@link LossGenerator#none()} unless {@code rcLossRate} or {@code rcLoss} was set.
     */
    public LossGenerator rcLoss() {
        return rcLoss;
    }

    /** Probability that an RC frame is delivered twice. */
    public double rcDuplicateRate() {
        return rcDuplicateRate;
    }

    /** Probability that an RC frame is held back {@link #rcReorderDelayNs()} so later frames overtake it. */
    public double rcReorderRate() {
        return rcReorderRate;
    }

    /** How long a reordered RC frame is held back, ns. */
    public long rcReorderDelayNs() {
        return rcReorderDelayNs;
    }

    /**
     * Probability that an RC frame is corrupted on the wire, so the receiving NIC's ICRC check drops it
     * ({@link SoftDevice#icrcDrops()}).
     */
    public double rcCorruptRate() {
        return rcCorruptRate;
    }

    /**
     * Probability that an RC frame carrying payload is corrupted where the NIC's ICRC does not see it (the ICRC
     * is computed over the damaged bytes), so the receiver accepts the frame and places the wrong bytes
     * ({@link SoftPort#rcFramesSilentlyCorrupted()}). Only an end-to-end check above the transport (DR's CRC32C)
     * catches it.
     */
    public double rcSilentCorruptRate() {
        return rcSilentCorruptRate;
    }

    /** Seed of the RC duplication, reorder and corruption draws (and of the loss draws set by {@code rcLossRate}). */
    public long rcFaultSeed() {
        return rcFaultSeed;
    }

    /**
     * Whether RDMA WRITEs (of 32 bytes or more) arriving on this port are placed torn: the first quarter
     * and the second half of the data (with its last byte) first, the second quarter only on the NIC's next
     * engine pass (or before its next request), so a reader polling the target between them sees both ends
     * of a WRITE while its middle is stale. Models
     * a NIC and bus that do not place a WRITE's bytes in address order (PCIe relaxed ordering, a
     * multi-packet WRITE over several paths). The port then reports
     * {@code Port.orderedWritePlacement()} false.
     */
    public boolean tornWrites() {
        return tornWrites;
    }

    /** Whether any RC fault is on (loss, duplication, reordering or corruption). */
    public boolean hasRcFaults() {
        return !(rcLoss instanceof Loss.None) || rcDuplicateRate > 0 || rcReorderRate > 0 || rcCorruptRate > 0
            || rcSilentCorruptRate > 0;
    }

    /** Whether the rail neither delays nor shapes (the cheap path). */
    public boolean isUnshaped() {
        return bandwidthBytesPerSec == Long.MAX_VALUE && latencyNs == 0;
    }

    @Override
    public String toString() {
        return "rail{bw=" + (bandwidthBytesPerSec == Long.MAX_VALUE ? "unshaped" : bandwidthBytesPerSec + " B/s")
            + ", latency=" + latencyNs + " ns, mtu=" + mtuBytes + ", loss=" + loss
            + (duplicateRate > 0 ? ", dup=" + duplicateRate : "") + (reorderRate > 0 ? ", reorder=" + reorderRate : "")
            + (corruptRate > 0 ? ", corrupt=" + corruptRate : "")
            + (hasRcFaults() ? ", rc{loss=" + rcLoss + ", dup=" + rcDuplicateRate + ", reorder=" + rcReorderRate
                + " by " + rcReorderDelayNs + " ns, corrupt=" + rcCorruptRate
                + (rcSilentCorruptRate > 0 ? ", silentCorrupt=" + rcSilentCorruptRate : "") + ", seed=" + rcFaultSeed + "}" : "") + (tornWrites ? ", tornWrites" : "") + "}";
    }

    /**
     * Builder; defaults: unshaped, 0 ns, MTU 4096, 256 KiB burst, no loss, no faults, seed 0; no RC
     * faults, RC reorder delay 10 µs, RC fault seed 0.
     */
    public static final class Builder {
        private long bandwidthBytesPerSec = Long.MAX_VALUE;
        private long latencyNs;
        private int mtuBytes = 4096;
        private long burstBytes = 256 * 1024;
        private LossGenerator loss = LossGenerator.none();
        private double duplicateRate;
        private double reorderRate;
        private double corruptRate;
        private long reorderDelayNs = 10_000;
        private long faultSeed;
        private double rcLossRate;
        private @Nullable LossGenerator rcLoss;
        private double rcDuplicateRate;
        private double rcReorderRate;
        private long rcReorderDelayNs = 10_000;
        private double rcCorruptRate;
        private double rcSilentCorruptRate;
        private long rcFaultSeed;
        private boolean tornWrites;

        private Builder() {
        }

        /** Places RDMA WRITEs arriving on the port torn (see {@link RailConfig#tornWrites()}); default false. */
        public Builder tornWrites(boolean torn) {
            this.tornWrites = torn;
            return this;
        }

        public Builder bandwidthBytesPerSec(long v) {
            this.bandwidthBytesPerSec = v;
            return this;
        }

        public Builder latencyNs(long v) {
            this.latencyNs = v;
            return this;
        }

        public Builder mtuBytes(int v) {
            this.mtuBytes = v;
            return this;
        }

        public Builder burstBytes(long v) {
            this.burstBytes = v;
            return this;
        }

        public Builder loss(LossGenerator v) {
            this.loss = java.util.Objects.requireNonNull(v, "loss");
            return this;
        }

        public Builder duplicateRate(double v) {
            this.duplicateRate = v;
            return this;
        }

        public Builder reorderRate(double v) {
            this.reorderRate = v;
            return this;
        }

        public Builder corruptRate(double v) {
            this.corruptRate = v;
            return this;
        }

        public Builder reorderDelayNs(long v) {
            this.reorderDelayNs = v;
            return this;
        }

        public Builder faultSeed(long v) {
            this.faultSeed = v;
            return this;
        }

        /**
         * RC loss: each RC frame (request or response) this port sends is lost independently with
         * probability {@code p}, drawn from a generator seeded with {@link #rcFaultSeed(long)}.
         * Checked by {@link #build()}: {@code p} in [0, 1].
         */
        public Builder rcLossRate(double p) {
            this.rcLossRate = p;
            return this;
        }

        /**
         * RC loss by any {@link LossGenerator} (fixed gap, multi-gap, burst, seeded random), instead of
         * {@link #rcLossRate(double)}; each port uses its own copy.
         */
        public Builder rcLoss(LossGenerator v) {
            this.rcLoss = java.util.Objects.requireNonNull(v, "rcLoss");
            return this;
        }

        /** RC duplication: probability in [0, 1] that an RC frame is delivered twice. */
        public Builder rcDuplicateRate(double p) {
            this.rcDuplicateRate = p;
            return this;
        }

        /**
         * RC reordering: probability in [0, 1] that an RC frame is held back {@link #rcReorderDelayNs(long)}
         * on the wire, so that the frames the port sends after it in that time arrive first.
         */
        public Builder rcReorderRate(double p) {
            this.rcReorderRate = p;
            return this;
        }

        /** How long a reordered RC frame is held back, ns (&gt; 0; default 10 µs). */
        public Builder rcReorderDelayNs(long v) {
            this.rcReorderDelayNs = v;
            return this;
        }

        /**
         * RC corruption: probability in [0, 1] that an RC frame (request or response) this port sends
         * is corrupted on the wire: the receiving NIC's ICRC check fails and it drops the frame, counted
         * in {@link SoftDevice#icrcDrops()}; the requester retransmits. Checked by {@link #build()}.
         */
        public Builder rcCorruptRate(double p) {
            this.rcCorruptRate = p;
            return this;
        }

        /**
         * Probability (0..1) that an RC frame with payload is corrupted before its ICRC is computed, so the
         * receiving NIC accepts it and places wrong bytes (see {@link RailConfig#rcSilentCorruptRate()}).
         */
        public Builder rcSilentCorruptRate(double p) {
            this.rcSilentCorruptRate = p;
            return this;
        }

        /** Seed of the RC fault draws. */
        public Builder rcFaultSeed(long v) {
            this.rcFaultSeed = v;
            return this;
        }

        /**
         * @throws VerbsException naming the first invalid link or UD value
         * @throws IllegalArgumentException naming the first invalid RC fault value and its valid range
         */
        public RailConfig build() {
            return new RailConfig(this);
        }
    }
}
