package io.rdmaflux.striping;

import reactor.core.Scannable;

/**
 * {@link Scannable} attributes of the {@link Rails} operators, for tools and tests:
 * {@code Scannable.from(subscriber).scan(RailAttributes.WEIGHTS)}.
 *
 * @param <T> the attribute's value type
 */
public final class RailAttributes<T> extends Scannable.Attr<T> {
    /** Current share of a striped message's bytes per rail. */
    public static final RailAttributes<double[]> WEIGHTS = new RailAttributes<>(new double[0]);
    /** Bytes completed per rail. */
    public static final RailAttributes<long[]> RAIL_BYTES = new RailAttributes<>(new long[0]);
    /** Messages completed per rail: a message counts once on every rail that carried a stripe of it. */
    public static final RailAttributes<long[]> RAIL_MESSAGES = new RailAttributes<>(new long[0]);
    /** Stripes (or whole multiplexed messages) completed per rail. */
    public static final RailAttributes<long[]> RAIL_STRIPES = new RailAttributes<>(new long[0]);
    /** Messages whose last stripe completed while an earlier PSN was still outstanding. */
    public static final RailAttributes<Long> OUT_OF_ORDER = new RailAttributes<>(0L);
    /** The whole snapshot, weight history included. */
    public static final RailAttributes<StripingMetrics> METRICS = new RailAttributes<>(null);

    private RailAttributes(T defaultValue) {
        super(defaultValue);
    }
}
