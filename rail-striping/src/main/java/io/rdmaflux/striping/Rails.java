package io.rdmaflux.striping;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.striping.connection.RailsChannelFactory;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import reactor.core.publisher.Flux;

/**
 * Façade of the rail operators: schedule a {@code Flux} of messages over several subchannels
 * (seed 000 §4) with {@code flux.transform(Rails.stripe(...))} or
 * {@code flux.transform(Rails.multiplex(...))}.
 *
 * <p>The resulting {@code Flux} emits each message once every stripe of it completed on its
 * subchannel (the completion filter of seed 000 §4.1), in upstream order. If a rail fails its
 * unacknowledged stripes are re-sent on the others; the {@code Flux} errors with
 * {@link NoRailException} only when no rail remains.
 *
 * <p><b>Discard support:</b> on cancel or error, messages received from upstream and not yet
 * emitted — queued or in flight — are passed to the discard hook
 * ({@code Flux#doOnDiscard}) after the subchannels were stopped, so their buffers can be released.
 *
 * <p><b>Scannable:</b> the operator's subscriber answers {@link RailAttributes} (weights, per-rail
 * bytes, messages and stripes, out-of-order count, full {@link StripingMetrics}).
 */
public final class Rails {
    private Rails() {
    }

    /**
     * A reactive-core {@link ChannelFactory}: round robin for small messages, adaptive weights
     * (seed 000 §4.5) for large ones, for {@code ConnectionSpec.rails(2).striping(Rails.adaptive())}.
     * Keep the returned factory to read a connection's current weights with
     * {@link RailsChannelFactory#weights(io.rdmaflux.core.RdmaConnection)} and its metrics with
     * {@link RailsChannelFactory#metrics(io.rdmaflux.core.RdmaConnection)}.
     */
    public static RailsChannelFactory adaptive() {
        return RailsChannelFactory.adaptive();
    }

    /**
     * A reactive-core {@link ChannelFactory} from a {@link RailsSpec} configured by
     * {@code configure} (its rail count comes from the connection). Its
     * {@link RailsChannelFactory#weights weights(connection)} reads a connection's current weights,
     * {@link RailsChannelFactory#metrics metrics(connection)} its {@link StripingMetrics}.
     */
    public static RailsChannelFactory channel(Consumer<RailsSpec> configure) {
        return RailsChannelFactory.of(configure);
    }

    /**
     * Schedules messages over {@code subchannels} as {@code spec} says: multiplexed below its
     * switchover threshold, striped at or above it.
     *
     * @param subchannels one per rail, in rail order
     * @param lengthOf    a message's length in bytes
     * @param clockNs     the clock stripes are timed with, in ns (a virtual clock in tests)
     * @throws IllegalArgumentException if the subchannel count differs from the spec's rail count
     */
    public static <T> Function<Flux<T>, Flux<T>> stripe(RailsSpec spec, List<? extends RailSubchannel<T>> subchannels,
                                                        ToLongFunction<? super T> lengthOf, LongSupplier clockNs) {
        if (subchannels.size() != spec.railCount()) {
            throw new IllegalArgumentException("one subchannel per rail required: spec has " + spec.railCount()
                + " rails but " + subchannels.size() + " subchannels were given");
        }
        return flux -> new FluxRailSchedule<>(flux, spec, subchannels, lengthOf, clockNs);
    }

    /**
     * Multiplexes whole messages over {@code subchannels} with {@code policy}; nothing is striped.
     *
     * @see #stripe
     */
    public static <T> Function<Flux<T>, Flux<T>> multiplex(MultiplexingPolicy.Factory policy,
                                                           List<? extends RailSubchannel<T>> subchannels,
                                                           ToLongFunction<? super T> lengthOf, LongSupplier clockNs) {
        RailsSpec spec = RailsSpec.rails(subchannels.size()).multiplexing(policy).switchoverThresholdBytes(Long.MAX_VALUE);
        return stripe(spec, subchannels, lengthOf, clockNs);
    }
}
