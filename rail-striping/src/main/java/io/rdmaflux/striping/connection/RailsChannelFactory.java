package io.rdmaflux.striping.connection;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.striping.MultiplexingPolicies;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingMetrics;
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
 * connection this factory scheduled, {@link #metrics(RdmaConnection)} the whole snapshot (the same
 * {@link StripingMetrics} the Reactor operators give: per-rail bytes, messages and stripes, weights,
 * out-of-order completions, and the weight history to plot how adaptive striping follows the rails,
 * seed 000 Fig. 20):
 * <pre>{@code
 * RailsChannelFactory rails = Rails.adaptive();
 * node.connect(address, ConnectionSpec.rails(2).striping(rails)).subscribe(c -> {
 *     double[] shares = rails.weights(c); // e.g. [0.8, 0.2] on 1 GB/s + 250 MB/s rails
 *     StripingMetrics m = rails.metrics(c);
 *     m.weightHistory().forEach(w -> log(w.timeNs(), w.shares()));
 * });
 * }</pre>
 *
 * <p><b>Thread-safety:</b> one factory may serve any number of connections, from any thread.
 */
public final class RailsChannelFactory implements ChannelFactory {
    private final Consumer<RailsSpec> configure;
    private final String name;
    /** Per connection (keyed by its rail-0 subchannel, held weakly), the scheduler created for it. */
    private final Map<Object, MessageRailScheduler> schedulers = Collections.synchronizedMap(new WeakHashMap<>());

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
        scheduler.advertisedRates(advertisedRates(subchannels));
        if (!subchannels.isEmpty()) {
            schedulers.put(subchannels.get(0).identity(), scheduler);
        }
        return scheduler;
    }

    /** Each subchannel's local port rate, bytes/s ({@link io.rdmaflux.verbs.Port#bandwidthBytesPerSec()}). */
    static long[] advertisedRates(List<? extends Subchannel> subchannels) {
        long[] rates = new long[subchannels.size()];
        for (int i = 0; i < rates.length; i++) {
            rates[i] = subchannels.get(i).port().bandwidthBytesPerSec();
        }
        return rates;
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
        MessageRailScheduler scheduler = schedulerOf(connection, "weights");
        double[] shares = new double[connection.subchannels().size()];
        for (int rail = 0; rail < shares.length; rail++) {
            shares[rail] = scheduler.share(rail);
        }
        return shares;
    }

    /**
     * A snapshot of how this factory's scheduler spread {@code connection}'s outbound messages over
     * its rails, in {@link StripingMetrics} form (one entry per rail, in rail order):
     * <ul>
     *   <li>{@code railBytes}: payload bytes completed per rail (RDMA WRITE stripes on the rail that
     *       carried them, messages sent whole as DATA frames on theirs; RTS, CTS and FIN frames not
     *       counted), {@code railMessages}: messages per rail, a message counting once on every rail
     *       that carried bytes of it; {@code railStripesCompleted} / {@code railStripesPosted}:
     *       stripes (a message sent whole counts as one) completed per rail and placed per rail.</li>
     *   <li>{@code weights} as {@link #weights}; {@code weightHistory}: one sample per weight update,
     *       stamped with the node clock (ns) of the stripe completion behind it, the first sample
     *       being the initial weights at the connection's first striped message (see
     *       {@code RailsSpec.weightHistoryCapacity} for the bound).</li>
     *   <li>{@code messagesCompleted}: messages delivered (every stripe's WRITE completed);
     *       {@code outOfOrderCompletions}: of those, completed while an earlier PSN was still
     *       outstanding, the sender-side reordering striping causes. How many the receiver held in
     *       its reorder queue is the peer connection's {@code ConnectionMetrics.outOfOrder()};
     *       {@code resentStripes} is 0 (the connection re-sends after a rail failure itself).</li>
     * </ul>
     * Any thread; each counter may lag the progress thread by one update.
     *
     * @throws IllegalArgumentException if {@code connection} was not scheduled by this factory (e.g.
     *                                  the accepting side, which uses its node's factory)
     */
    public StripingMetrics metrics(RdmaConnection connection) {
        return schedulerOf(connection, "metrics").metrics();
    }

    /**
     * Whether this factory scheduled {@code connection} (it was passed to the {@code ConnectionSpec} of its
     * {@code connect}), i.e. whether {@link #weights} and {@link #metrics} answer for it. Any thread.
     */
    public boolean schedules(RdmaConnection connection) {
        List<? extends Subchannel> subchannels = connection.subchannels();
        return !subchannels.isEmpty() && schedulers.get(subchannels.get(0).identity()) != null;
    }

    private MessageRailScheduler schedulerOf(RdmaConnection connection, String what) {
        List<? extends Subchannel> subchannels = connection.subchannels();
        MessageRailScheduler scheduler = subchannels.isEmpty() ? null : schedulers.get(subchannels.get(0).identity());
        if (scheduler == null) {
            throw new IllegalArgumentException("connection " + connection + " was not scheduled by " + this
                + "; read the " + what + " from the factory passed to ConnectionSpec.striping(..) of this connection");
        }
        return scheduler;
    }

    @Override
    public String toString() {
        return "RailsChannelFactory{" + name + "}";
    }
}
