package io.rdmaflux.striping.connection;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.striping.MultiplexingPolicies;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingPolicies;
import java.util.List;
import java.util.function.Consumer;

/**
 * {@link ChannelFactory}s built from rail-striping policies, for
 * {@code ConnectionSpec.rails(n).striping(RailsChannelFactory.adaptive())}. The rail count comes
 * from the connection; {@code configure} sets everything else of the {@link RailsSpec}.
 */
public final class RailsChannelFactory implements ChannelFactory {
    private final Consumer<RailsSpec> configure;
    private final String name;

    private RailsChannelFactory(String name, Consumer<RailsSpec> configure) {
        this.name = name;
        this.configure = configure;
    }

    /** A factory whose {@link RailsSpec} (rails set from the connection) is configured by {@code configure}. */
    public static RailsChannelFactory of(Consumer<RailsSpec> configure) {
        return new RailsChannelFactory("custom", configure);
    }

    /** Round robin for small messages, adaptive weights (seed 000 §4.5) for large ones. */
    public static RailsChannelFactory adaptive() {
        return new RailsChannelFactory("adaptive", s -> s.striping(StripingPolicies.adaptive()));
    }

    /** Round robin for small messages, even weights for large ones (seed 000 §6.2's default). */
    public static RailsChannelFactory even() {
        return new RailsChannelFactory("even", s -> s.striping(StripingPolicies.even()));
    }

    /** Static weights for large messages, one per rail. */
    public static RailsChannelFactory weighted(double... weights) {
        double[] copy = weights.clone();
        return new RailsChannelFactory("weighted", s -> s.striping(StripingPolicies.weighted(copy)));
    }

    /** Window-based round robin for every message size (seed 000 §4.4). */
    public static RailsChannelFactory windowRoundRobin(int window) {
        MultiplexingPolicies.windowRoundRobin(window);
        return new RailsChannelFactory("window-rr(" + window + ")",
            s -> s.multiplexing(MultiplexingPolicies.windowRoundRobin(window)).switchoverThresholdBytes(Long.MAX_VALUE));
    }

    /**
     * @throws IllegalArgumentException if the configured policies do not fit the connection's rails
     */
    @Override
    public SubchannelScheduler create(List<? extends Subchannel> subchannels) {
        RailsSpec spec = RailsSpec.rails(subchannels.size());
        configure.accept(spec);
        return new MessageRailScheduler(spec);
    }

    @Override
    public String toString() {
        return "RailsChannelFactory{" + name + "}";
    }
}
