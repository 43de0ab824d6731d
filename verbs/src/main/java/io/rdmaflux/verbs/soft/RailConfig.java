package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.VerbsException;

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
 * <p>RC traffic sees bandwidth, latency and port state, never random loss: an InfiniBand link layer
 * is lossless (credit based), and RC failure is modelled by port down and dead peers instead.
 *
 * <p>Immutable; build with {@link #builder()}; every setter value is checked by {@link Builder#build()}.
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

    /** Whether the rail neither delays nor shapes (the cheap path). */
    public boolean isUnshaped() {
        return bandwidthBytesPerSec == Long.MAX_VALUE && latencyNs == 0;
    }

    @Override
    public String toString() {
        return "rail{bw=" + (bandwidthBytesPerSec == Long.MAX_VALUE ? "unshaped" : bandwidthBytesPerSec + " B/s")
            + ", latency=" + latencyNs + " ns, mtu=" + mtuBytes + ", loss=" + loss
            + (duplicateRate > 0 ? ", dup=" + duplicateRate : "") + (reorderRate > 0 ? ", reorder=" + reorderRate : "")
            + (corruptRate > 0 ? ", corrupt=" + corruptRate : "") + "}";
    }

    /** Builder; defaults: unshaped, 0 ns, MTU 4096, 256 KiB burst, no loss, no faults, seed 0. */
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

        private Builder() {
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

        /** @throws VerbsException naming the first invalid value */
        public RailConfig build() {
            return new RailConfig(this);
        }
    }
}
