package io.rdmaflux.core.tck;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaNode;

import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * What a {@link ConnectionTck} test asks of its pair: the rail count, settings applied to both nodes'
 * builders after the pair's own (sizes, rendezvous, send queue), a customizer of the client's
 * {@link ConnectionSpec}, and hints a pair may honour. Immutable; every method returns a new value.
 */
public final class PairOptions {
    private final int rails;
    private final Consumer<RdmaNode.Builder> node;
    private final UnaryOperator<ConnectionSpec> spec;
    private final long railLatencySkewNs;
    private final boolean fastRailFailureDetection;
    private final RailFaults railFaults;

    private PairOptions(int rails, Consumer<RdmaNode.Builder> node, UnaryOperator<ConnectionSpec> spec, long railLatencySkewNs,
                        boolean fastRailFailureDetection, RailFaults railFaults) {
        if (rails < 1) {
            throw new IllegalArgumentException("rails >= 1 required but it was " + rails);
        }
        this.rails = rails;
        this.node = node;
        this.spec = spec;
        this.railLatencySkewNs = railLatencySkewNs;
        this.fastRailFailureDetection = fastRailFailureDetection;
        this.railFaults = railFaults;
    }

    /** {@code rails} rails, node defaults, {@code ConnectionSpec.rails(rails)}. */
    public static PairOptions rails(int rails) {
        return new PairOptions(rails, b -> { }, s -> s, 0, false, null);
    }

    /** Also applies {@code config} to both node builders (after the pair's own settings). */
    public PairOptions node(Consumer<RdmaNode.Builder> config) {
        Objects.requireNonNull(config, "config");
        Consumer<RdmaNode.Builder> before = node;
        return new PairOptions(rails, b -> {
            before.accept(b);
            config.accept(b);
        }, spec, railLatencySkewNs, fastRailFailureDetection, railFaults);
    }

    /** Also applies {@code customizer} to the client's spec (which starts as {@code ConnectionSpec.rails(rails)}). */
    public PairOptions spec(UnaryOperator<ConnectionSpec> customizer) {
        Objects.requireNonNull(customizer, "customizer");
        UnaryOperator<ConnectionSpec> before = spec;
        return new PairOptions(rails, node, s -> customizer.apply(before.apply(s)), railLatencySkewNs, fastRailFailureDetection, railFaults);
    }

    /**
     * Rail {@code r} one-way latency {@code r * skewNs} (both directions), so messages on a later rail are
     * overtaken by those on earlier ones and the receiver must reorder. A hint: pairs whose fabric has no
     * rail model (or one that cannot be set) ignore it.
     */
    public PairOptions railLatencySkewNs(long skewNs) {
        return new PairOptions(rails, node, spec, skewNs, fastRailFailureDetection, railFaults);
    }

    /** Asks a real-time pair for short RC retry timeouts, so a port taken down is detected within about half a second. */
    public PairOptions fastRailFailureDetection() {
        return new PairOptions(rails, node, spec, railLatencySkewNs, true, railFaults);
    }

    /** RC wire faults on every rail (see {@link RailFaults}: a hook for pairs that can inject them). */
    public PairOptions railFaults(RailFaults faults) {
        return new PairOptions(rails, node, spec, railLatencySkewNs, fastRailFailureDetection, Objects.requireNonNull(faults, "faults"));
    }

    public int rails() {
        return rails;
    }

    /** Applies the node settings to {@code b}. */
    public void configureNode(RdmaNode.Builder b) {
        node.accept(b);
    }

    /** The client's spec. */
    public ConnectionSpec connectionSpec() {
        return spec.apply(ConnectionSpec.rails(rails));
    }

    public long railLatencySkewNs() {
        return railLatencySkewNs;
    }

    public boolean wantsFastRailFailureDetection() {
        return fastRailFailureDetection;
    }

    /** The faults asked for, or null for none. */
    public RailFaults railFaults() {
        return railFaults;
    }
}
