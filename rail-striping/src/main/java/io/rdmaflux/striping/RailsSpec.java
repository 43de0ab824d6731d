package io.rdmaflux.striping;

import java.util.function.Consumer;

/**
 * Configuration of a virtual channel: its rail count, the multiplexing and striping policies and
 * the switchover threshold between them (seed 000 §4.3–4.4, seed 002 §3.2). A mutable builder;
 * {@link CommunicationScheduler} and the {@link Rails} operators copy what they need, so one spec
 * may create many channels.
 *
 * <pre>{@code
 * RailsSpec spec = RailsSpec.rails(2)
 *     .multiplexing(MultiplexingPolicies.windowRoundRobin(8))
 *     .striping(StripingPolicies.adaptive())
 *     .switchoverThresholdBytes(64 * 1024);
 * }</pre>
 */
public final class RailsSpec {
    /** Default switchover threshold: messages of at least 64 KiB are striped. */
    public static final long DEFAULT_SWITCHOVER_THRESHOLD_BYTES = 64 * 1024;
    /** Default stripe granule: 4 KiB, a page, so stripes of large messages stay page aligned. */
    public static final long DEFAULT_STRIPE_GRANULE_BYTES = 4096;
    /** Default bound of messages in flight on the virtual channel. */
    public static final int DEFAULT_MAX_IN_FLIGHT_MESSAGES = 64;
    /** Default number of weight samples kept for {@link StripingMetrics#weightHistory()}. */
    public static final int DEFAULT_WEIGHT_HISTORY_CAPACITY = 4096;
    /** Default commit horizon of a connection's striped messages: 20 ms of each rail's measured rate. */
    public static final long DEFAULT_COMMIT_HORIZON_NS = 20_000_000L;

    private final int railCount;
    private MultiplexingPolicy.Factory multiplexing = MultiplexingPolicies.roundRobin();
    private StripingPolicy.Factory striping = StripingPolicies.even();
    private long switchoverThresholdBytes = DEFAULT_SWITCHOVER_THRESHOLD_BYTES;
    private long stripeGranuleBytes = DEFAULT_STRIPE_GRANULE_BYTES;
    private int maxInFlightMessages = DEFAULT_MAX_IN_FLIGHT_MESSAGES;
    private int weightHistoryCapacity = DEFAULT_WEIGHT_HISTORY_CAPACITY;
    private long commitHorizonNs = DEFAULT_COMMIT_HORIZON_NS;
    private boolean commonFinish;

    private RailsSpec(int railCount) {
        this.railCount = RailMask.checkRailCount(railCount);
    }

    /**
     * A spec for {@code railCount} rails with round robin multiplexing, even striping and the
     * defaults above (the configuration seed 000 §6.2 measures).
     *
     * @throws IllegalArgumentException unless {@code 1 <= railCount <= 64}
     */
    public static RailsSpec rails(int railCount) {
        return new RailsSpec(railCount);
    }

    /** Applies {@code customizer} to this spec (for lambda-style configuration) and returns it. */
    public RailsSpec configure(Consumer<RailsSpec> customizer) {
        customizer.accept(this);
        return this;
    }

    public RailsSpec multiplexing(MultiplexingPolicy.Factory factory) {
        this.multiplexing = factory;
        return this;
    }

    public RailsSpec striping(StripingPolicy.Factory factory) {
        this.striping = factory;
        return this;
    }

    /**
     * Messages of at least this many bytes are striped, smaller ones multiplexed; {@code Long.MAX_VALUE}
     * multiplexes everything, 0 stripes everything.
     *
     * @throws IllegalArgumentException if negative
     */
    public RailsSpec switchoverThresholdBytes(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("switchoverThresholdBytes >= 0 required but it was " + bytes);
        }
        this.switchoverThresholdBytes = bytes;
        return this;
    }

    /**
     * Stripe lengths are multiples of this (except the tail of a message).
     *
     * @throws IllegalArgumentException if {@code < 1}
     */
    public RailsSpec stripeGranuleBytes(long bytes) {
        this.stripeGranuleBytes = StripingPolicies.checkGranule(bytes);
        return this;
    }

    /**
     * Bound on messages posted and not yet released by the completion filter; also the upstream
     * prefetch of the {@link Rails} operators.
     *
     * @throws IllegalArgumentException unless in [1, 2^20]
     */
    public RailsSpec maxInFlightMessages(int messages) {
        if (messages < 1 || messages > (1 << 20)) {
            throw new IllegalArgumentException("maxInFlightMessages in [1, 1048576] required but it was " + messages);
        }
        this.maxInFlightMessages = messages;
        return this;
    }

    /**
     * Number of weight samples the metrics keep (oldest dropped first); 0 keeps none.
     *
     * @throws IllegalArgumentException if negative
     */
    public RailsSpec weightHistoryCapacity(int samples) {
        if (samples < 0) {
            throw new IllegalArgumentException("weightHistoryCapacity >= 0 required but it was " + samples);
        }
        this.weightHistoryCapacity = samples;
        return this;
    }

    /**
     * How far ahead a connection commits striped messages to its rails, in ns of each rail's measured
     * transfer rate: a granted message is split and posted once some rail's queued stripes would drain
     * within this time, not as soon as its CTS arrives. A rail that slows down then holds only about this
     * much work, which it drains at its new rate while the others carry the next messages. The gate and
     * the drain rate it measures (stripe bytes over delivery times of stripes queued behind another) are
     * rdmaflux's own, an extension of the seed papers: seed 004 &sect;II-B only uses each rail's time
     * until idle to decide how to split a message, not when. A rail with nothing queued opens the gate,
     * whatever its current share, so a rail a static policy gives a weight of 0 keeps it open. Larger
     * values ride out longer stalls of the progress threads; {@code Long.MAX_VALUE} commits every granted
     * message at once.
     * Used by {@link io.rdmaflux.striping.connection.RailsChannelFactory} connections; the operators post
     * what they are given.
     *
     * @throws IllegalArgumentException unless {@code > 0}
     */
    public RailsSpec commitHorizonNs(long nanos) {
        if (nanos <= 0) {
            throw new IllegalArgumentException("commitHorizonNs > 0 required but it was " + nanos
                + "; give the time each rail's queued stripes should last, e.g. 20_000_000 (20 ms)");
        }
        this.commitHorizonNs = nanos;
        return this;
    }

    public long commitHorizonNs() {
        return commitHorizonNs;
    }

    /**
     * Whether the {@link Rails} operators top a rate-following split (adaptive striping) up to a common
     * finish time given what each rail still has queued ({@link CommonFinishSplit}), as connections built
     * by {@link io.rdmaflux.striping.connection.RailsChannelFactory} always do. Off by default for the
     * operators, which then split every message by the weights alone as seed 000 &sect;4.4 prints it
     * (the virtual-time reproductions of seed 000's figures run that way); on, the backlog of the
     * messages split before the weights converged drains instead of holding back the window.
     */
    public RailsSpec commonFinish(boolean enabled) {
        this.commonFinish = enabled;
        return this;
    }

    public boolean commonFinish() {
        return commonFinish;
    }

    public int railCount() {
        return railCount;
    }

    public MultiplexingPolicy.Factory multiplexing() {
        return multiplexing;
    }

    public StripingPolicy.Factory striping() {
        return striping;
    }

    public long switchoverThresholdBytes() {
        return switchoverThresholdBytes;
    }

    public long stripeGranuleBytes() {
        return stripeGranuleBytes;
    }

    public int maxInFlightMessages() {
        return maxInFlightMessages;
    }

    public int weightHistoryCapacity() {
        return weightHistoryCapacity;
    }

    @Override
    public String toString() {
        return "RailsSpec{rails=" + railCount + ", switchover=" + switchoverThresholdBytes + "B, granule="
            + stripeGranuleBytes + "B, maxInFlight=" + maxInFlightMessages + ", commitHorizon=" + commitHorizonNs + "ns}";
    }
}
