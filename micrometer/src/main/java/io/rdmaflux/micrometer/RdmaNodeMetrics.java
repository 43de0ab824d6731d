package io.rdmaflux.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.rdmaflux.core.ConnectionMetrics;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.micrometer.ConnectionTotals.Counter;
import io.rdmaflux.striping.connection.RailsChannelFactory;
import io.rdmaflux.verbs.PortAddress;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Micrometer meters for one {@link RdmaNode}: its connections summed (counters keep what closed
 * connections counted; gauges read the live ones), its rails, a connect timer and a message delivery
 * timer, plus an {@link Observation} around {@link #connect}. Names and tags follow reactor-netty's
 * style: dotted lower-case names, a {@code node} tag (the node's name) and only low-cardinality tags;
 * never a peer address (that goes only into the connect observation's high-cardinality key values,
 * which meters never get).
 *
 * <table>
 *   <caption>Meters (every one tagged {@code node} and the builder's extra tags)</caption>
 *   <tr><th>name</th><th>type, unit</th><th>what</th></tr>
 *   <tr><td>{@code rdmaflux.connections.active}</td><td>gauge</td><td>connections not yet freed</td></tr>
 *   <tr><td>{@code rdmaflux.connection.messages.sent}</td><td>counter, messages</td><td>messages whose last fragment was posted</td></tr>
 *   <tr><td>{@code rdmaflux.connection.messages.received}</td><td>counter, messages</td><td>messages handed to a receive subscriber</td></tr>
 *   <tr><td>{@code rdmaflux.connection.bytes.sent}</td><td>counter, bytes</td><td>payload bytes sent over all rails</td></tr>
 *   <tr><td>{@code rdmaflux.connection.bytes.received}</td><td>counter, bytes</td><td>bytes of the messages received</td></tr>
 *   <tr><td>{@code rdmaflux.connection.credits.available}</td><td>gauge, credits</td><td>message credits held for sending now</td></tr>
 *   <tr><td>{@code rdmaflux.connection.credit.stalls}</td><td>counter</td><td>episodes with a message to send and no credit
 *       ({@link ConnectionMetrics#creditStalls()})</td></tr>
 *   <tr><td>{@code rdmaflux.connection.receive.buffers.held}</td><td>gauge, buffers</td><td>received messages not yet released</td></tr>
 *   <tr><td>{@code rdmaflux.connection.out.of.order}</td><td>counter, messages</td><td>messages that waited in the reorder queue for an earlier PSN</td></tr>
 *   <tr><td>{@code rdmaflux.connection.retransmits}</td><td>counter, messages</td><td>messages sent again over another rail after their rail failed</td></tr>
 *   <tr><td>{@code rdmaflux.connection.delivery.time}</td><td>function timer</td><td>per delivered message, from the post of its
 *       first frame to the completion of its last (sender side: in the peer's receive buffer); count and total,
 *       so the mean; on the node's clock</td></tr>
 *   <tr><td>{@code rdmaflux.connection.connect.time}</td><td>timer, tags {@code outcome} (SUCCESS, ERROR, CANCELLED) and
 *       {@code rails}</td><td>each {@link #connect} of this binder, on the node's clock</td></tr>
 *   <tr><td>{@code rdmaflux.rail.bytes}</td><td>counter, bytes, tag {@code rail} (0, 1, ..)</td><td>payload bytes sent on the rail</td></tr>
 *   <tr><td>{@code rdmaflux.rail.weight}</td><td>gauge, tag {@code rail}</td><td>striping share of the rail in [0, 1], the
 *       mean over the live connections scheduled by the factories given to {@link Builder#striping}; only with those</td></tr>
 * </table>
 *
 * <pre>{@code
 * RailsChannelFactory rails = Rails.adaptive();
 * RdmaNodeMetrics metrics = RdmaNodeMetrics.builder(node).striping(rails).observationRegistry(observations).build();
 * metrics.bindTo(meterRegistry);
 * RdmaConnection c = metrics.connect(address, ConnectionSpec.rails(2).striping(rails)).block();
 * }</pre>
 *
 * <p>Counters start from what the node's connections had counted when the binder was built (its
 * connections not yet freed then) and go on over every connection opened later, closed ones included.
 * Reading a meter sums over the live connections' {@link RdmaConnection#metrics()}: a scrape costs a few
 * hundred ns per connection and nothing is added to the message path (the node counts anyway).
 *
 * <p><b>Concurrency:</b> thread-safe; {@link #bindTo} may be called for several registries. <b>Lifecycle:</b>
 * the binder follows the node from {@link Builder#build()} until {@link #close()}; meters stay registered
 * (remove them from the registry if the node goes away for good).
 */
public final class RdmaNodeMetrics implements MeterBinder, AutoCloseable {
    /** Name of the connect observation. */
    public static final String CONNECT_OBSERVATION = "rdmaflux.connect";
    /** Low-cardinality key of the connect observation and tag of the connect timer: the rails asked for. */
    public static final String RAILS = "rails";
    /** Low-cardinality key / tag: SUCCESS, ERROR or CANCELLED. */
    public static final String OUTCOME = "outcome";
    /** High-cardinality key of the connect observation only: the peer's address. */
    public static final String PEER_ADDRESS = "peer.address";
    static final String CONNECT_TIME = "rdmaflux.connection.connect.time";

    private final RdmaNode node;
    private final Tags tags;
    private final List<RailsChannelFactory> striping;
    private final ObservationRegistry observations;
    private final ConnectionTotals totals;
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

    private RdmaNodeMetrics(Builder b) {
        this.node = b.node;
        this.tags = Tags.of("node", node.name()).and(b.tags);
        this.striping = List.copyOf(b.striping);
        this.observations = b.observations;
        this.totals = new ConnectionTotals(node.ports().size());
        totals.follow(node);
    }

    /** A binder for {@code node} with no extra tags, no striping weights and no observation registry. */
    public static RdmaNodeMetrics of(RdmaNode node) {
        return builder(node).build();
    }

    public static Builder builder(RdmaNode node) {
        return new Builder(Objects.requireNonNull(node, "node"));
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("rdmaflux.connections.active", totals, t -> t.live().size()).tags(tags)
            .description("connections of the node not yet freed").baseUnit("connections").register(registry);
        counter(registry, "rdmaflux.connection.messages.sent", Counter.MESSAGES_SENT, "messages",
            "messages whose last fragment was posted");
        counter(registry, "rdmaflux.connection.messages.received", Counter.MESSAGES_RECEIVED, "messages",
            "messages handed to a receive subscriber");
        counter(registry, "rdmaflux.connection.bytes.sent", Counter.BYTES_SENT, "bytes", "payload bytes sent over all rails");
        counter(registry, "rdmaflux.connection.bytes.received", Counter.BYTES_RECEIVED, "bytes", "bytes of the messages received");
        counter(registry, "rdmaflux.connection.credit.stalls", Counter.CREDIT_STALLS, null,
            "episodes with a message to send and no credit for it");
        counter(registry, "rdmaflux.connection.out.of.order", Counter.OUT_OF_ORDER, "messages",
            "messages that waited in the reorder queue for an earlier PSN");
        counter(registry, "rdmaflux.connection.retransmits", Counter.MESSAGES_RESENT, "messages",
            "messages sent again over another rail after their rail failed");
        Gauge.builder("rdmaflux.connection.credits.available", totals, t -> t.liveSum(ConnectionMetrics::sendCredits)).tags(tags)
            .description("message credits held for sending now").baseUnit("credits").register(registry);
        Gauge.builder("rdmaflux.connection.receive.buffers.held", totals, t -> t.liveSum(ConnectionMetrics::receiveBuffersHeld)).tags(tags)
            .description("received messages not yet released").baseUnit("buffers").register(registry);
        FunctionTimer.builder("rdmaflux.connection.delivery.time", totals, t -> t.total(Counter.MESSAGES_DELIVERED),
                t -> t.total(Counter.DELIVERY_TOTAL_NS), TimeUnit.NANOSECONDS).tags(tags)
            .description("time from the post of a message's first frame to the completion of its last").register(registry);
        for (int rail = 0; rail < node.ports().size(); rail++) {
            int r = rail;
            Tags railTags = tags.and(Tag.of("rail", Integer.toString(rail)));
            FunctionCounter.builder("rdmaflux.rail.bytes", totals, t -> t.railBytes(r)).tags(railTags).baseUnit("bytes")
                .description("payload bytes sent on the rail").register(registry);
            if (!striping.isEmpty()) {
                Gauge.builder("rdmaflux.rail.weight", this, m -> m.meanWeight(r)).tags(railTags).strongReference(true)
                    .description("striping share of the rail, the mean over the live connections").register(registry);
            }
        }
        registries.add(registry);
    }

    private void counter(MeterRegistry registry, String name, Counter counter, @Nullable String unit, String description) {
        FunctionCounter.Builder<ConnectionTotals> b = FunctionCounter.builder(name, totals, t -> t.total(counter)).tags(tags)
            .description(description);
        if (unit != null) {
            b.baseUnit(unit);
        }
        b.register(registry);
    }

    /** The mean striping share of {@code rail} over the live connections some factory of ours scheduled; NaN if none. */
    double meanWeight(int rail) {
        double sum = 0;
        int n = 0;
        for (RdmaConnection c : totals.live()) {
            for (RailsChannelFactory f : striping) {
                if (f.schedules(c)) {
                    double[] w = f.weights(c);
                    if (rail < w.length) {
                        sum += w[rail];
                        n++;
                    }
                    break;
                }
            }
        }
        return n == 0 ? Double.NaN : sum / n;
    }

    /**
     * {@link RdmaNode#connect} timed into {@code rdmaflux.connection.connect.time} of every registry this
     * binder is bound to, inside an {@link Observation} named {@value #CONNECT_OBSERVATION} (contextual name
     * {@code "rdmaflux connect"}, context {@link RdmaConnectContext}) of the builder's
     * {@link ObservationRegistry}: low-cardinality keys {@code node}, {@value #RAILS}, {@value #OUTCOME}; the
     * peer address only as the high-cardinality key {@value #PEER_ADDRESS}. An observation in the
     * subscriber's Reactor context (under {@link ObservationThreadLocalAccessor#KEY}) becomes its parent, and
     * the connect observation is put in the context upstream.
     *
     * @return the node's connect, signals unchanged; cancelling it ends the observation with outcome CANCELLED
     */
    public Mono<RdmaConnection> connect(PortAddress address, ConnectionSpec spec) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(spec, "spec");
        return Mono.deferContextual(reactorContext -> {
            RdmaConnectContext context = new RdmaConnectContext(node, address, spec);
            Observation observation = Observation.createNotStarted(CONNECT_OBSERVATION, () -> context, observations)
                .contextualName("rdmaflux connect")
                .lowCardinalityKeyValue("node", node.name())
                .lowCardinalityKeyValue(RAILS, Integer.toString(spec.rails()))
                .highCardinalityKeyValue(PEER_ADDRESS, address.toString());
            Observation parent = reactorContext.getOrDefault(ObservationThreadLocalAccessor.KEY, null);
            if (parent != null) {
                observation.parentObservation(parent);
            }
            long startNs = node.clock().nanoTime();
            AtomicBoolean ended = new AtomicBoolean();
            observation.start();
            return node.connect(address, spec)
                .doOnSuccess(c -> {
                    if (c != null) {
                        context.connection(c);
                    }
                    end(ended, observation, "SUCCESS", null, spec, startNs);
                })
                .doOnError(e -> end(ended, observation, "ERROR", e, spec, startNs))
                .doOnCancel(() -> end(ended, observation, "CANCELLED", null, spec, startNs))
                .contextWrite(ctx -> ctx.put(ObservationThreadLocalAccessor.KEY, observation));
        });
    }

    private void end(AtomicBoolean ended, Observation observation, String outcome, @Nullable Throwable error, ConnectionSpec spec,
                     long startNs) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        long elapsedNs = node.clock().nanoTime() - startNs;
        for (MeterRegistry registry : registries) {
            Timer.builder(CONNECT_TIME).tags(tags).tag(OUTCOME, outcome).tag(RAILS, Integer.toString(spec.rails()))
                .description("time to establish a connection (connect until the peer accepted)")
                .register(registry).record(elapsedNs, TimeUnit.NANOSECONDS);
        }
        observation.lowCardinalityKeyValue(OUTCOME, outcome);
        if (error != null) {
            observation.error(error);
        }
        observation.stop();
    }

    /** Stops following the node's connections; the meters stay registered and keep the counts so far. */
    @Override
    public void close() {
        totals.stop();
    }

    /** Builds an {@link RdmaNodeMetrics}. Not thread-safe. */
    public static final class Builder {
        private final RdmaNode node;
        private Tags tags = Tags.empty();
        private final List<RailsChannelFactory> striping = new ArrayList<>();
        private ObservationRegistry observations = ObservationRegistry.NOOP;

        private Builder(RdmaNode node) {
            this.node = node;
        }

        /**
         * Extra tags on every meter. Keep them low-cardinality (an application or cluster name).
         *
         * @throws IllegalArgumentException if one is named {@code node}, {@code rail}, {@value RdmaNodeMetrics#RAILS} or
         *                                  {@value RdmaNodeMetrics#OUTCOME} (the binder's own)
         */
        public Builder tags(Iterable<Tag> extra) {
            for (Tag t : extra) {
                if (t.getKey().equals("node") || t.getKey().equals("rail") || t.getKey().equals(RAILS) || t.getKey().equals(OUTCOME)) {
                    throw new IllegalArgumentException("tag '" + t.getKey() + "' is set by RdmaNodeMetrics itself; give the extra tag another name");
                }
            }
            this.tags = this.tags.and(extra);
            return this;
        }

        /**
         * Striping policies whose weights {@code rdmaflux.rail.weight} reports: the factories passed to
         * {@code ConnectionSpec.striping(..)} of this node's connections.
         */
        public Builder striping(RailsChannelFactory... factories) {
            for (RailsChannelFactory f : factories) {
                striping.add(Objects.requireNonNull(f, "striping factory"));
            }
            return this;
        }

        /** Where the connect {@link Observation} goes; default {@link ObservationRegistry#NOOP}. */
        public Builder observationRegistry(ObservationRegistry registry) {
            this.observations = Objects.requireNonNull(registry, "observationRegistry");
            return this;
        }

        /** The binder, following the node from now on. */
        public RdmaNodeMetrics build() {
            return new RdmaNodeMetrics(this);
        }
    }
}
