package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.ChannelKind;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How {@link RdmaNode#connect} opens a connection: how many rails (one subchannel per rail of the
 * node, its first ones in the order given to {@link RdmaNode.Builder#ports} or {@link RdmaNode.Builder#rails},
 * or those {@link #rails(String...)} names) and which multiplexing/striping
 * policy schedules messages over them. Immutable; every method returns a new spec.
 *
 * <pre>{@code
 * ConnectionSpec.defaults()                          // one rail, the plain send/receive channel
 * ConnectionSpec.rails(2).striping(Rails.adaptive())  // a factory from a striping module
 * ConnectionSpec.rails(2).channelKind(ChannelKind.RC_SEND_RECV)  // the channel kind of every rail
 * ConnectionSpec.rails("mlx5_0:1", "mlx5_1:1")       // two rails of the node by name, on two devices
 * }</pre>
 *
 * <p>The channel kind of each rail is agreed in the handshake: the accepting node must offer it
 * ({@code RdmaNode.Builder.channelProvider(..)}), or the connect fails naming the kind and the rail.
 *
 * @see ChannelFactory for the SPI a striping layer implements
 */
public final class ConnectionSpec {
    private static final ConnectionSpec DEFAULTS = new ConnectionSpec(1, ChannelFactory.roundRobin(), 5_000_000_000L,
        List.of(ChannelKind.RC_SEND_RECV), false, false, null, RendezvousMode.WRITE, ConnectRetry.none(), false, List.of());

    private final int rails;
    private final ChannelFactory channelFactory;
    private final long connectTimeoutNs;
    /** One kind for every rail ({@link #perRail} false), or one per rail. */
    private final List<ChannelKind> kinds;
    private final boolean perRail;
    /** Whether the kinds were set ({@link #channelKind(ChannelKind)}, {@link #channelKinds}): no default eager, no downgrade. */
    private final boolean kindsExplicit;
    private final @Nullable EagerSpec eager;
    private final RendezvousMode rendezvousMode;
    private final ConnectRetry connectRetry;
    private final boolean lazy;
    /** The node rails by name ({@link #rails(String...)}), or empty: the node's first {@link #rails} rails. */
    private final List<String> railNames;

    private ConnectionSpec(int rails, ChannelFactory channelFactory, long connectTimeoutNs, List<ChannelKind> kinds,
                           boolean perRail, boolean kindsExplicit, @Nullable EagerSpec eager, RendezvousMode rendezvousMode,
                           ConnectRetry connectRetry, boolean lazy, List<String> railNames) {
        this.lazy = lazy;
        this.railNames = railNames;
        this.rails = rails;
        this.channelFactory = channelFactory;
        this.connectTimeoutNs = connectTimeoutNs;
        this.kinds = kinds;
        this.perRail = perRail;
        this.kindsExplicit = kindsExplicit;
        this.eager = eager;
        this.rendezvousMode = rendezvousMode;
        this.connectRetry = connectRetry;
    }

    /**
     * This spec retrying a connect that failed for a retryable reason (nothing listens yet, unreachable,
     * the exchange broke, timed out) as {@code retry} says: a client reaches a server that restarts on
     * the same address (default {@link ConnectRetry#none()}). Each attempt has {@link #connectTimeoutNs()}.
     */
    public ConnectionSpec connectRetry(ConnectRetry retry) {
        return new ConnectionSpec(rails, channelFactory, connectTimeoutNs, kinds, perRail, kindsExplicit, eager, rendezvousMode,
            Objects.requireNonNull(retry, "retry"), lazy, railNames);
    }

    /** The connect retry ({@link ConnectRetry#none()} unless set). */
    public ConnectRetry connectRetry() {
        return connectRetry;
    }

    /**
     * This spec with rendezvous mode {@code mode} for large messages, both directions (default
     * {@link RendezvousMode#WRITE}). READ and AUTO fall back to WRITE when the peer or a rail's channel
     * kind has no READ rendezvous; {@link RdmaConnection#rendezvousMode()} says what was agreed.
     */
    public ConnectionSpec rendezvous(RendezvousMode mode) {
        return new ConnectionSpec(rails, channelFactory, connectTimeoutNs, kinds, perRail, kindsExplicit, eager,
            Objects.requireNonNull(mode, "mode"), connectRetry, lazy, railNames);
    }

    /**
     * This spec with lazy establishment (seed 003 &sect;3.2): {@code RdmaNode.connect} returns a connection
     * at once, with no queue pair, buffer or handshake; they are made when the connection is first used &mdash;
     * the first {@code send} subscribed or the first {@code receive()} subscribed (whose demand is the first
     * receive credit) &mdash; so connecting to all of N peers costs nothing until they talk. Establishing
     * then runs under {@link #connectRetry} like an eager connect (a peer that is not there yet is reached
     * by a retry). If it fails (nothing listens, the peer refuses, the connect times out, and the retries,
     * if any, ran out), the send that started it and every later one, and the receive, error with an
     * {@link RdmaException} of category CONNECT that names the address and carries the connection
     * manager's error (or the {@link ConnectFailedException} of the retries) as its cause; the connection
     * is then closed.
     */
    public ConnectionSpec lazy(boolean lazy) {
        return new ConnectionSpec(rails, channelFactory, connectTimeoutNs, kinds, perRail, kindsExplicit, eager, rendezvousMode, connectRetry, lazy, railNames);
    }

    /** Whether establishment waits for the first use ({@link #lazy(boolean)}). */
    public boolean isLazy() {
        return lazy;
    }

    /** The rendezvous mode asked for. */
    public RendezvousMode rendezvousMode() {
        return rendezvousMode;
    }

    /** One rail, round robin (trivially rail 0), a 5 s connect timeout. */
    public static ConnectionSpec defaults() {
        return DEFAULTS;
    }

    /**
     * A spec with {@code n} rails and the default round-robin scheduler.
     *
     * @param n in [1, 255]; at connect time also at most the node's port count
     * @throws IllegalArgumentException naming the value
     */
    public static ConnectionSpec rails(int n) {
        return DEFAULTS.withRails(n);
    }

    /** This spec with {@code n} rails. @throws IllegalArgumentException unless 1 &lt;= n &lt;= 255 */
    public ConnectionSpec withRails(int n) {
        if (n < 1 || n > 255) {
            throw new IllegalArgumentException("rails in [1, 255] required but it was " + n
                + "; a connection has at least one rail (ConnectionSpec.defaults() has one) and one rail per port given to RdmaNode.Builder.ports(..)");
        }
        if (perRail && kinds.size() != n) {
            throw new IllegalArgumentException("rails(" + n + ") but this spec names the channel kinds of " + kinds.size()
                + " rails " + kinds + "; set the rails first, or give channelKind(kind) for every rail");
        }
        return new ConnectionSpec(n, channelFactory, connectTimeoutNs, kinds, perRail, kindsExplicit, eager, rendezvousMode, connectRetry, lazy,
            List.of());
    }

    /**
     * A spec over the node rails named {@code railNames}, in this order, with the default round-robin scheduler:
     * names as {@link RdmaNode#railNames()} lists them, {@code device:port} (e.g. {@code soft1:1}) or
     * {@code device:port/p} for path {@code p} of a port with several paths. The connect fails with an
     * {@link IllegalArgumentException} naming a rail the node does not have. (The accepting node uses its
     * first rails, one per rail named.)
     *
     * @throws IllegalArgumentException if none, more than 255, blank or repeated
     */
    public static ConnectionSpec rails(String... railNames) {
        return DEFAULTS.withRails(List.of(railNames));
    }

    /** This spec over the node rails named {@code railNames} (see {@link #rails(String...)}). */
    public ConnectionSpec withRails(List<String> railNames) {
        List<String> names = List.copyOf(railNames);
        ConnectionSpec s = withRails(names.size());
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            if (name.isBlank() || names.subList(0, i).contains(name)) {
                throw new IllegalArgumentException("rail name '" + name + "' in " + names + " is " + (name.isBlank() ? "blank" : "repeated")
                    + "; name each rail once as RdmaNode.railNames() lists them, e.g. rails(\"soft0:1\", \"soft1:1\")");
            }
        }
        return new ConnectionSpec(s.rails, channelFactory, connectTimeoutNs, kinds, perRail, kindsExplicit, eager, rendezvousMode, connectRetry,
            lazy, names);
    }

    /** The node rails named by {@link #rails(String...)}, or empty: the node's first {@link #rails()} rails. */
    public List<String> railNames() {
        return railNames;
    }

    /** This spec with the scheduling policy {@code factory} builds per connection. */
    public ConnectionSpec striping(ChannelFactory factory) {
        return new ConnectionSpec(rails, Objects.requireNonNull(factory, "factory"), connectTimeoutNs, kinds, perRail, kindsExplicit, eager, rendezvousMode, connectRetry, lazy, railNames);
    }

    /** This spec with a connect timeout in ns. @throws IllegalArgumentException unless &gt; 0 */
    public ConnectionSpec connectTimeoutNs(long timeoutNs) {
        if (timeoutNs <= 0) {
            throw new IllegalArgumentException("connectTimeoutNs > 0 required but it was " + timeoutNs);
        }
        return new ConnectionSpec(rails, channelFactory, timeoutNs, kinds, perRail, kindsExplicit, eager, rendezvousMode, connectRetry, lazy, railNames);
    }

    /**
     * This spec with channels of {@code kind} on every rail, insisted on: a peer that does not offer it
     * refuses the connection (without this call a node offering {@link ChannelKind#EAGER_RDMA} asks for
     * it and falls back to {@link ChannelKind#RC_SEND_RECV}).
     */
    public ConnectionSpec channelKind(ChannelKind kind) {
        return new ConnectionSpec(rails, channelFactory, connectTimeoutNs, List.of(Objects.requireNonNull(kind, "kind")), false,
            true, eager, rendezvousMode, connectRetry, lazy, railNames);
    }

    /**
     * This spec with the eager RDMA ring settings {@code spec} for its rails (seed 001 &sect;4): with
     * {@link EagerSpec#enabled()} false the rails use RC send/receive even where both nodes offer eager;
     * without this call the node's ({@code RdmaNode.Builder.eager}) apply.
     */
    public ConnectionSpec eager(EagerSpec spec) {
        return new ConnectionSpec(rails, channelFactory, connectTimeoutNs, kinds, perRail, kindsExplicit, Objects.requireNonNull(spec, "spec"), rendezvousMode, connectRetry, lazy, railNames);
    }

    /** The eager settings given with {@link #eager(EagerSpec)}, or null for the node's. */
    public @Nullable EagerSpec eager() {
        return eager;
    }

    /** Whether the channel kinds were set explicitly (then no default kind and no downgrade applies). */
    public boolean channelKindsExplicit() {
        return kindsExplicit;
    }

    /**
     * This spec with the channel kind of each rail, in rail order.
     *
     * @throws IllegalArgumentException unless there is one kind per rail ({@link #rails()})
     */
    public ConnectionSpec channelKinds(List<ChannelKind> kindsPerRail) {
        if (kindsPerRail.size() != rails) {
            throw new IllegalArgumentException(kindsPerRail.size() + " channel kinds " + kindsPerRail + " for " + rails
                + " rails; give one kind per rail, or channelKind(kind) for every rail");
        }
        return new ConnectionSpec(rails, channelFactory, connectTimeoutNs, List.copyOf(kindsPerRail), true, true, eager, rendezvousMode, connectRetry, lazy, railNames);
    }

    /** The channel kind of rail {@code rail}. @throws IndexOutOfBoundsException unless 0 &lt;= rail &lt; rails() */
    public ChannelKind channelKind(int rail) {
        Objects.checkIndex(rail, rails);
        return perRail ? kinds.get(rail) : kinds.get(0);
    }

    public int rails() {
        return rails;
    }

    public ChannelFactory channelFactory() {
        return channelFactory;
    }

    public long connectTimeoutNs() {
        return connectTimeoutNs;
    }

    @Override
    public String toString() {
        return "ConnectionSpec{rails=" + (railNames.isEmpty() ? rails : railNames) + ", kinds=" + kinds + (kindsExplicit ? "" : " (default)") + ", eager=" + eager
            + ", connectTimeoutNs=" + connectTimeoutNs + ", rendezvous=" + rendezvousMode
            + (connectRetry.maxAttempts() > 1 ? ", " + connectRetry : "") + (lazy ? ", lazy" : "") + "}";
    }
}
