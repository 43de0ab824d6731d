package io.rdmaflux.ud.dr;

import java.util.Objects;

/**
 * The settings of one {@link DrEndpoint}; both ends of a path must use the same {@link #mode()},
 * {@link #datagramBytes()}, {@link #receiveBufferVfrags()} and {@link #firstPsn()}. Immutable; build with
 * {@link #builder()}, every setter checks its argument and names it in the error.
 *
 * <p>Defaults follow seed 003: a 2 KiB UD MTU (&sect;4.2), a static receive pool (&sect;4.1), a handful of
 * retries per rail before failover (&sect;4.2). Timer values are ns, sizes bytes or VFRAGs as named.
 */
public final class DrConfig {
    /** All defaults. */
    public static final DrConfig DEFAULTS = builder().build();

    private final int datagramBytes;
    private final int windowVfrags;
    private final int receiveBufferVfrags;
    private final int initialCreditVfrags;
    private final int ackEveryVfrags;
    private final long ackDelayNs;
    private final long initialRtoNs;
    private final long minRtoNs;
    private final long maxRtoNs;
    private final long localCompletionTimeoutNs;
    private final int maxRetriesPerRail;
    private final long railTimeoutNs;
    private final long deadRailProbeIntervalNs;
    private final long keepaliveNs;
    private final int maxMessageBytes;
    private final int firstPsn;
    private final RetransmitMode mode;

    private DrConfig(Builder b) {
        if (b.minRtoNs > b.maxRtoNs) {
            throw new IllegalArgumentException("minRtoNs <= maxRtoNs required but they were " + b.minRtoNs + " and " + b.maxRtoNs);
        }
        this.datagramBytes = b.datagramBytes;
        this.windowVfrags = b.windowVfrags;
        this.receiveBufferVfrags = b.receiveBufferVfrags;
        this.initialCreditVfrags = b.initialCreditVfrags == 0 ? b.receiveBufferVfrags : Math.min(b.initialCreditVfrags, b.receiveBufferVfrags);
        this.ackEveryVfrags = b.ackEveryVfrags;
        this.ackDelayNs = b.ackDelayNs;
        this.initialRtoNs = Math.max(b.minRtoNs, Math.min(b.maxRtoNs, b.initialRtoNs));
        this.minRtoNs = b.minRtoNs;
        this.maxRtoNs = b.maxRtoNs;
        this.localCompletionTimeoutNs = b.localCompletionTimeoutNs;
        this.maxRetriesPerRail = b.maxRetriesPerRail;
        this.railTimeoutNs = b.railTimeoutNs;
        this.deadRailProbeIntervalNs = b.deadRailProbeIntervalNs;
        this.keepaliveNs = b.keepaliveNs;
        this.maxMessageBytes = b.maxMessageBytes;
        this.firstPsn = b.firstPsn;
        this.mode = b.mode;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.datagramBytes = datagramBytes;
        b.windowVfrags = windowVfrags;
        b.receiveBufferVfrags = receiveBufferVfrags;
        b.initialCreditVfrags = initialCreditVfrags;
        b.ackEveryVfrags = ackEveryVfrags;
        b.ackDelayNs = ackDelayNs;
        b.initialRtoNs = initialRtoNs;
        b.minRtoNs = minRtoNs;
        b.maxRtoNs = maxRtoNs;
        b.localCompletionTimeoutNs = localCompletionTimeoutNs;
        b.maxRetriesPerRail = maxRetriesPerRail;
        b.railTimeoutNs = railTimeoutNs;
        b.deadRailProbeIntervalNs = deadRailProbeIntervalNs;
        b.keepaliveNs = keepaliveNs;
        b.maxMessageBytes = maxMessageBytes;
        b.firstPsn = firstPsn;
        b.mode = mode;
        return b;
    }

    /** Largest datagram, header included, bytes (the UD MTU). */
    public int datagramBytes() {
        return datagramBytes;
    }

    /** Payload bytes of one VFRAG: {@link #datagramBytes()} minus {@link DrDatagram#HEADER_BYTES}. */
    public int vfragPayloadBytes() {
        return datagramBytes - DrDatagram.HEADER_BYTES;
    }

    /** VFRAGs the sender may have unacknowledged at once. */
    public int windowVfrags() {
        return windowVfrags;
    }

    /** VFRAGs the receiver buffers for its peer (its credit: held for reassembly, delivery or reordering). */
    public int receiveBufferVfrags() {
        return receiveBufferVfrags;
    }

    /**
     * The credit both ends assume before the first ACK, VFRAGs (at most {@link #receiveBufferVfrags()}): small when
     * the receiver's pool is shared, so a new peer cannot take more than its grant before it heard of it.
     */
    public int initialCreditVfrags() {
        return initialCreditVfrags;
    }

    /** The receiver ACKs at the latest after this many new VFRAGs. */
    public int ackEveryVfrags() {
        return ackEveryVfrags;
    }

    /** The receiver ACKs at the latest this long after the first VFRAG it has not acknowledged, ns (the ACK timer). */
    public long ackDelayNs() {
        return ackDelayNs;
    }

    public long initialRtoNs() {
        return initialRtoNs;
    }

    public long minRtoNs() {
        return minRtoNs;
    }

    public long maxRtoNs() {
        return maxRtoNs;
    }

    /** A posted VFRAG whose local send completion has not come within this long counts as a failed try, ns. */
    public long localCompletionTimeoutNs() {
        return localCompletionTimeoutNs;
    }

    /**
     * Retransmission timeouts in a row without progress after which a rail may be failed over: it is failed once
     * more than this many fired <em>and</em> the peer sent no ACK on it for {@link #railTimeoutNs()}.
     */
    public int maxRetriesPerRail() {
        return maxRetriesPerRail;
    }

    /**
     * The give-up budget of a rail in time, ns: a rail is failed over only when no ACK of any kind (new, duplicate,
     * probe reply, window update) came from the peer on it for this long (and more than {@link #maxRetriesPerRail()}
     * timeouts fired). Separate from the RTO on purpose: the RTO follows the measured RTT (&mu;s on the mem fabric)
     * so a lost VFRAG is repaired fast, while giving up must outlast a garbage-collection pause or a progress thread
     * descheduled on a loaded host; any ACK proves the peer is there and restarts this clock. Default 1 s.
     */
    public long railTimeoutNs() {
        return railTimeoutNs;
    }

    /** How often a failed rail is probed to bring it back, ns. */
    public long deadRailProbeIntervalNs() {
        return deadRailProbeIntervalNs;
    }

    /** An endpoint that waits for its peer and heard nothing for this long probes it, ns. */
    public long keepaliveNs() {
        return keepaliveNs;
    }

    /** Largest message, bytes. */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /** The PSN of the first VFRAG in each direction. */
    public int firstPsn() {
        return firstPsn;
    }

    public RetransmitMode mode() {
        return mode;
    }

    /**
     * The longest one rail takes to be failed over once the peer stops answering on it, ns: it needs
     * {@code maxRetriesPerRail + 1} timeouts (each at most {@code maxRtoNs} apart) and {@code railTimeoutNs} without
     * an ACK, checked when a timeout fires: {@code max((maxRetriesPerRail + 1) * maxRtoNs, railTimeoutNs + maxRtoNs)}.
     */
    public long railFailureBoundNs() {
        return Math.max((maxRetriesPerRail + 1) * maxRtoNs, railTimeoutNs + maxRtoNs);
    }

    /**
     * The longest an endpoint with work outstanding takes to fail once its peer stops answering on every one of
     * {@code rails} rails, ns: the rails fail one after the other, each within {@link #railFailureBoundNs()} of the
     * previous one (or of the silence starting), plus one {@code localCompletionTimeoutNs}.
     */
    public long failureBoundNs(int rails) {
        return rails * railFailureBoundNs() + localCompletionTimeoutNs;
    }

    @Override
    public String toString() {
        return "DrConfig{datagramBytes=" + datagramBytes + ", windowVfrags=" + windowVfrags + ", receiveBufferVfrags="
            + receiveBufferVfrags + ", ackEveryVfrags=" + ackEveryVfrags + ", ackDelayNs=" + ackDelayNs + ", rtoNs=["
            + minRtoNs + ", " + initialRtoNs + ", " + maxRtoNs + "], maxRetriesPerRail=" + maxRetriesPerRail + ", railTimeoutNs=" + railTimeoutNs + ", mode=" + mode + "}";
    }

    /** Builds a {@link DrConfig}; not thread-safe. */
    public static final class Builder {
        private int datagramBytes = 2048;
        private int windowVfrags = 64;
        private int receiveBufferVfrags = 128;
        private int initialCreditVfrags;
        private int ackEveryVfrags = 8;
        private long ackDelayNs = 50_000;
        private long initialRtoNs = 1_000_000;
        private long minRtoNs = 200_000;
        private long maxRtoNs = 50_000_000;
        private long localCompletionTimeoutNs = 10_000_000;
        private int maxRetriesPerRail = 7;
        private long railTimeoutNs = 1_000_000_000L;
        private long deadRailProbeIntervalNs = 100_000_000;
        private long keepaliveNs = 1_000_000_000;
        private int maxMessageBytes = 16 << 20;
        private int firstPsn;
        private RetransmitMode mode = RetransmitMode.SELECTIVE;

        private Builder() {
        }

        /** @param bytes in [{@link DrDatagram#HEADER_BYTES} + 1, 65535], the UD MTU */
        public Builder datagramBytes(int bytes) {
            datagramBytes = range("datagramBytes", bytes, DrDatagram.HEADER_BYTES + 1, 65535);
            return this;
        }

        /** @param vfrags in [1, 4096] */
        public Builder windowVfrags(int vfrags) {
            windowVfrags = range("windowVfrags", vfrags, 1, 4096);
            return this;
        }

        /** @param vfrags in [1, 65536] */
        public Builder receiveBufferVfrags(int vfrags) {
            receiveBufferVfrags = range("receiveBufferVfrags", vfrags, 1, 65536);
            return this;
        }

        /** @param vfrags in [1, 65536]; clamped to receiveBufferVfrags; default receiveBufferVfrags */
        public Builder initialCreditVfrags(int vfrags) {
            initialCreditVfrags = range("initialCreditVfrags", vfrags, 1, 65536);
            return this;
        }

        /** @param vfrags in [1, 4096] */
        public Builder ackEveryVfrags(int vfrags) {
            ackEveryVfrags = range("ackEveryVfrags", vfrags, 1, 4096);
            return this;
        }

        /** @param ns &ge; 0 */
        public Builder ackDelayNs(long ns) {
            ackDelayNs = nonNegative("ackDelayNs", ns);
            return this;
        }

        /** @param ns &gt; 0; clamped into [minRtoNs, maxRtoNs] */
        public Builder initialRtoNs(long ns) {
            initialRtoNs = positive("initialRtoNs", ns);
            return this;
        }

        /** @param ns &gt; 0 */
        public Builder minRtoNs(long ns) {
            minRtoNs = positive("minRtoNs", ns);
            return this;
        }

        /** @param ns &gt; 0, &ge; minRtoNs (checked at build) */
        public Builder maxRtoNs(long ns) {
            maxRtoNs = positive("maxRtoNs", ns);
            return this;
        }

        /** @param ns &gt; 0 */
        public Builder localCompletionTimeoutNs(long ns) {
            localCompletionTimeoutNs = positive("localCompletionTimeoutNs", ns);
            return this;
        }

        /** @param retries in [0, 1000] */
        public Builder maxRetriesPerRail(int retries) {
            maxRetriesPerRail = range("maxRetriesPerRail", retries, 0, 1000);
            return this;
        }

        /** @param ns &gt; 0: see {@link DrConfig#railTimeoutNs()} */
        public Builder railTimeoutNs(long ns) {
            railTimeoutNs = positive("railTimeoutNs", ns);
            return this;
        }

        /** @param ns &gt; 0 */
        public Builder deadRailProbeIntervalNs(long ns) {
            deadRailProbeIntervalNs = positive("deadRailProbeIntervalNs", ns);
            return this;
        }

        /** @param ns &gt; 0 */
        public Builder keepaliveNs(long ns) {
            keepaliveNs = positive("keepaliveNs", ns);
            return this;
        }

        /** @param bytes in [0, 2^30] */
        public Builder maxMessageBytes(int bytes) {
            maxMessageBytes = range("maxMessageBytes", bytes, 0, 1 << 30);
            return this;
        }

        /** Any int: PSNs wrap modulo 2^32. */
        public Builder firstPsn(int psn) {
            firstPsn = psn;
            return this;
        }

        public Builder mode(RetransmitMode m) {
            mode = Objects.requireNonNull(m, "mode");
            return this;
        }

        public DrConfig build() {
            return new DrConfig(this);
        }

        private static int range(String name, int v, int lo, int hi) {
            if (v < lo || v > hi) {
                throw new IllegalArgumentException(name + " in [" + lo + ", " + hi + "] required but it was " + v);
            }
            return v;
        }

        private static long positive(String name, long v) {
            if (v <= 0) {
                throw new IllegalArgumentException(name + " > 0 required but it was " + v);
            }
            return v;
        }

        private static long nonNegative(String name, long v) {
            if (v < 0) {
                throw new IllegalArgumentException(name + " >= 0 required but it was " + v);
            }
            return v;
        }
    }
}
