package io.rdmaflux.striping.connection;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.striping.MultiplexingPolicies;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingPolicies;
import io.rdmaflux.core.RdmaConnection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.Consumer;

/**
 * {@link ChannelFactory}s built from rail-striping policies, for
 * {@code ConnectionSpec.rails(n).striping(RailsChannelFactory.adaptive())}. The rail count comes
 * from the connection; {@code configure} sets everything else of the {@link RailsSpec}.
 *
 * <p><b>Observability:</b> {@link #weights(RdmaConnection)} reads the current striping weights of a
 * connection this factory scheduled, e.g. to log or plot them while adaptive striping follows the
 * rails (seed 000 Fig. 20):
 * <pre>{@code
 * RailsChannelFactory rails = Rails.adaptive();
 * node.connect(address, ConnectionSpec.rails(2).striping(rails)).subscribe(c -> {
 *     double[] shares = rails.weights(c); // e.g. [0.8, 0.2] on 1 GB/s + 250 MB/s rails
 * });
 * }</pre>
 *
 * <p><b>Thread-safety:</b> one factory may serve any number of connections, from any thread.
 */
public final class RailsChannelFactory implements ChannelFactory {
    private final Consumer<RailsSpec> configure;
    private final String name;
    /** Per connection (keyed by its rail-0 subchannel, held weakly), the scheduler created for it. */
    private final Map<Subchannel, MessageRailScheduler> schedulers = Collections.synchronizedMap(new WeakHashMap<>());

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
        MessageRailScheduler scheduler = new MessageRailScheduler(spec);
        if (!subchannels.isEmpty()) {
            schedulers.put(subchannels.get(0), scheduler);
        }
        return scheduler;
    }

    /**
     * The current striping weights of {@code connection}: the share of a striped message's bytes
     * each rail gets, one entry per rail in rail order, each in [0, 1], summing to 1 over the rails
     * not failed (0 for a failed rail). Adaptive striping moves them as it measures the rails; even
     * and static weights never change. A fresh array on each call; the values may lag the progress
     * thread by one update.
     *
     * @throws IllegalArgumentException if {@code connection} was not scheduled by this factory (e.g.
     *                                  the accepting side of a connection, which uses its node's
     *                                  factory): read the weights where {@code connect} used this one
     */
    public double[] weights(RdmaConnection connection) {
        List<? extends Subchannel> subchannels = connection.subchannels();
        MessageRailScheduler scheduler = subchannels.isEmpty() ? null : schedulers.get(subchannels.get(0));
        if (scheduler == null) {
            throw new IllegalArgumentException("connection " + connection + " was not scheduled by " + this
                + "; read the weights from the factory passed to ConnectionSpec.striping(..) of this connection");
        }
        double[] shares = new double[subchannels.size()];
        for (int rail = 0; rail < shares.length; rail++) {
            shares[rail] = scheduler.share(rail);
        }
        return shares;
    }

    @Override
    public String toString() {
        return "RailsChannelFactory{" + name + "}";
    }
}
