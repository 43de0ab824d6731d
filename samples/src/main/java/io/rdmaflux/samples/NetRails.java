package io.rdmaflux.samples;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.engine.ProgressIdleStrategy;
import io.rdmaflux.striping.connection.RailsChannelFactory;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One end of a multi-rail connection between two processes (or two network namespaces, or two
 * hosts) over the soft provider's IP fabric: one soft device with one port per local address, rail
 * {@code i} bound to address {@code i} (RC over TCP); the peer's rail {@code i} must be reachable
 * from it (in {@code scripts/netns-rails.sh}, rail {@code i} is the subnet {@code 10.77.<i+1>.0/24}).
 * Or ({@link Settings#ucxTls}) over the {@code ucx} provider: one device with one port per rail,
 * its frames carried by UCX ({@code tcp}), listening and connecting through its TCP connection
 * manager at {@code ucx://host:port}.
 *
 * <p>{@link #listen} waits for one peer and accepts its connection; {@link #connect} connects to a
 * listening peer. Each side's {@code policy} schedules what that side sends over the rails (the
 * listener's through its node's accept factory), so give both the same one.
 *
 * <p>{@link #close()} closes the connection, the node and the provider; no thread or socket stays
 * behind.
 */
final class NetRails implements AutoCloseable {
    private final RdmaProvider provider;
    private final RdmaNode node;
    private final RdmaConnection connection;
    private final RailProbe probe;
    private final List<String> addresses;
    private final ChannelFactory policy;
    private final @Nullable String ucxTls;

    private NetRails(RdmaProvider provider, RdmaNode node, RdmaConnection connection, RailProbe probe, Settings s) {
        this.provider = provider;
        this.node = node;
        this.connection = connection;
        this.probe = probe;
        this.addresses = s.addresses;
        this.policy = s.policy;
        this.ucxTls = s.ucxTls;
    }

    /**
     * What both ends build.
     *
     * @param addresses         local IP per rail
     * @param railBytesPerSec   per-rail shaping in bytes/s inside the soft NIC, or null for none (the links shape)
     * @param bufferBytes       send/receive buffer size, bytes
     * @param receiveBuffers    receive (and send) buffers per rail
     * @param maxMessageBytes   largest message, bytes
     * @param rendezvousBuffers large messages in flight per node and direction
     * @param policy            how this side schedules what it sends over the rails
     * @param eager             the eager RDMA ring's settings
     * @param ucxTls            null: the soft provider's IP fabric; else the {@code ucx} provider over these UCX
     *                          transports ({@code tcp}, {@code sm,self}) with its TCP connection manager
     *                          ({@code cm=tcp}), one port per rail (the addresses only count the rails: UCX
     *                          picks its interfaces itself, {@code UCX_NET_DEVICES} narrows them)
     * @param channelKinds      the connecting side's channel kind of every rail (one) or of each rail (one per rail),
     *                          insisted on; null for the nodes' default. The listening side takes what the connector asks.
     * @param idle              how each node's progress thread idles (a {@link ProgressIdleStrategy} template), or null for
     *                          the node's default ({@link ProgressIdleStrategy#backoff()})
     */
    record Settings(List<String> addresses, @Nullable List<Long> railBytesPerSec, int bufferBytes, int receiveBuffers,
                    int maxMessageBytes, int rendezvousBuffers, ChannelFactory policy, EagerSpec eager, @Nullable String ucxTls,
                    @Nullable List<ChannelKind> channelKinds, @Nullable ProgressIdleStrategy idle) {
        Settings(List<String> addresses, @Nullable List<Long> railBytesPerSec, int bufferBytes, int receiveBuffers,
                 int maxMessageBytes, int rendezvousBuffers, ChannelFactory policy, EagerSpec eager) {
            this(addresses, railBytesPerSec, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, eager, null, null, null);
        }

        Settings(List<String> addresses, @Nullable List<Long> railBytesPerSec, int bufferBytes, int receiveBuffers,
                 int maxMessageBytes, int rendezvousBuffers, ChannelFactory policy) {
            this(addresses, railBytesPerSec, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, EagerSpec.DEFAULTS);
        }

        /** These settings with the eager ring {@code on} or off. */
        Settings eager(boolean on) {
            return new Settings(addresses, railBytesPerSec, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy,
                on ? EagerSpec.DEFAULTS : EagerSpec.OFF, ucxTls, channelKinds, idle);
        }

        /** These settings on the {@code ucx} provider over UCX transports {@code tls}, or on the soft provider when null. */
        Settings ucx(@Nullable String tls) {
            return new Settings(addresses, railBytesPerSec, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, eager, tls,
                channelKinds, idle);
        }

        /** These settings with the connector's channel {@code kinds} (null: the nodes' default). */
        Settings channelKinds(@Nullable List<ChannelKind> kinds) {
            return new Settings(addresses, railBytesPerSec, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, eager,
                ucxTls, kinds == null ? null : List.copyOf(kinds), idle);
        }

        /** These settings with each node's progress thread idling as {@code strategy} (a template; null: the node's default). */
        Settings idle(@Nullable ProgressIdleStrategy strategy) {
            return new Settings(addresses, railBytesPerSec, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, eager,
                ucxTls, channelKinds, strategy);
        }


        /** The fabric of the connection manager's addresses: {@code ucx} or {@code net}. */
        String fabric() {
            return ucxTls != null ? "ucx" : "net";
        }
    }

    /**
     * Listens at {@code at} and accepts the first connection within {@code timeout}; {@code onListening}
     * gets the address actually bound (a port of 0 picks a free one).
     *
     * @throws UserError if the address cannot be bound or no peer connects in time
     */
    static NetRails listen(Settings s, HostPort at, Duration timeout, java.util.function.Consumer<String> onListening) {
        RdmaProvider provider = open(s, "listener");
        RdmaNode node = null;
        try {
            RailProbe probe = new RailProbe(s.policy);
            node = node(provider, s, "listener", probe);
            RdmaConnection c;
            try (RdmaServer server = bind(node, s.fabric(), at)) {
                onListening.accept(server.address().host() + ":" + server.address().port());
                c = server.accept().next().block(timeout);
            } catch (IllegalStateException e) {
                throw new UserError("no peer connected to " + at + " within " + timeout.toSeconds() + " s (--timeout-s)", e);
            }
            if (c == null) {
                throw new UserError("the listener at " + at + " closed before a peer connected");
            }
            return new NetRails(provider, node, c, probe, s);
        } catch (RuntimeException e) {
            closeQuietly(node, provider);
            throw e;
        }
    }

    /**
     * Connects to the peer listening at {@code to}.
     *
     * @param listenCommand the command that starts the peer, for the error's hint, e.g. {@code rdmaflux bench bw}
     * @throws UserError if the peer is unreachable, refuses, or does not answer in time
     */
    static NetRails connect(Settings s, HostPort to, Duration timeout, String listenCommand) {
        RdmaProvider provider = open(s, "connector");
        RdmaNode node = null;
        try {
            RailProbe probe = new RailProbe(s.policy);
            node = node(provider, s, "connector", probe);
            ConnectionSpec spec = TransportOption.apply(ConnectionSpec.rails(s.addresses.size()).striping(probe).connectTimeoutNs(timeout.toNanos()),
                s.channelKinds);
            RdmaConnection c;
            try {
                c = node.connect(new PortAddress(s.fabric(), to.host(), to.port()), spec).block(timeout.plusSeconds(5));
            } catch (RuntimeException e) {
                throw new UserError("cannot connect to " + to + ": " + Main.rootMessage(e)
                    + "; start the peer there first (" + listenCommand + " --listen " + to + (s.ucxTls != null ? " --provider ucx --rails "
                    + s.addresses.size() : " --addresses ...") + ")", e);
            }
            if (c == null) {
                throw new UserError("cannot connect to " + to + ": no answer");
            }
            return new NetRails(provider, node, c, probe, s);
        } catch (RuntimeException e) {
            closeQuietly(node, provider);
            throw e;
        }
    }

    /** This side's node. */
    RdmaNode node() {
        return node;
    }

    private static RdmaServer bind(RdmaNode node, String fabric, HostPort at) {
        try {
            return node.bind(new PortAddress(fabric, at.host(), at.port()));
        } catch (RuntimeException e) {
            throw new UserError("cannot listen at " + at + ": " + Main.rootMessage(e), e);
        }
    }

    private static RdmaProvider open(Settings s, String role) {
        if (s.ucxTls != null) {
            return openUcx(s, role);
        }
        // the node's progress thread drives the soft NIC too (one thread per end, no hand-off between
        // two) and, when idle, blocks in the NIC's socket selector so an arriving frame wakes it
        return openProvider(s.addresses, s.railBytesPerSec, s.bufferBytes, role, "invoker");
    }

    /**
     * Opens a soft provider on the IP fabric: one device with one port (rail) per address, port
     * {@code i + 1} shaped to {@code railBytesPerSec.get(i)} when given.
     *
     * @param burstBufferBytes the buffer size the shaping burst is sized from, bytes
     * @throws UserError if an address cannot be bound
     */
    static RdmaProvider openProvider(List<String> addresses, @Nullable List<Long> railBytesPerSec, int burstBufferBytes, String role) {
        return openProvider(addresses, railBytesPerSec, burstBufferBytes, role, "dedicated");
    }

    /** As above; {@code threading} is the soft provider's option: {@code dedicated} (its own thread) or {@code invoker} (a node drives it). */
    static RdmaProvider openProvider(List<String> addresses, @Nullable List<Long> railBytesPerSec, int burstBufferBytes, String role,
                                     String threading) {
        RdmaProvider p;
        try {
            p = RdmaProviders.open("soft", Map.of("fabric", "net", "addresses", String.join(",", addresses), "name", "samples-" + role,
                "threading", threading));
        } catch (RuntimeException e) {
            throw new UserError("cannot bind the rails to --addresses " + String.join(",", addresses) + ": " + Main.rootMessage(e)
                + "; give one local IP per rail", e);
        }
        if (railBytesPerSec != null) {
            SoftProvider soft = (SoftProvider) p;
            for (int r = 0; r < railBytesPerSec.size(); r++) {
                soft.softDevice(0).softPort(r + 1).setRail(InJvmRails.rail(railBytesPerSec.get(r), 0, burstBufferBytes));
            }
        }
        return p;
    }

    /**
     * The {@code ucx} provider with its TCP connection manager, one device with one port per rail, driven
     * by the node's progress thread (INVOKER), as the soft provider here.
     *
     * @throws UserError naming the provider and the fix when UCX cannot run or rejects the transports
     */
    private static RdmaProvider openUcx(Settings s, String role) {
        try {
            return RdmaProviders.open("ucx", Map.of("tls", s.ucxTls, "cm", "tcp", "ports", Integer.toString(s.addresses.size()),
                "name", "samples-" + role, "threading", "invoker"));
        } catch (RuntimeException e) {
            throw new UserError("--provider ucx: the " + role + "'s provider did not open: " + Main.rootMessage(e), e);
        }
    }

    /** The node each end builds over {@code provider}: one port per address, {@code probe} schedules what it accepts. */
    static RdmaNode node(RdmaProvider provider, Settings s, String name, RailProbe probe) {
        int[] ports = new int[s.addresses.size()];
        for (int i = 0; i < ports.length; i++) {
            ports[i] = i + 1;
        }
        RdmaNode.Builder b = RdmaNode.builder().provider(provider).name(name).ports(ports)
            .bufferBytes(s.bufferBytes).receiveBuffers(s.receiveBuffers).sendBuffers(s.receiveBuffers)
            .maxMessageBytes(s.maxMessageBytes).rendezvousBuffers(s.rendezvousBuffers)
            .acceptChannelFactory(probe).eager(s.eager).threadingMode(ThreadingMode.DEDICATED);
        if (s.idle != null) {
            b.idleStrategy(s.idle);
        }
        return b.build();
    }

    private static void closeQuietly(@Nullable RdmaNode node, RdmaProvider provider) {
        try {
            if (node != null) {
                node.close();
            }
        } finally {
            provider.close();
        }
    }

    RdmaConnection connection() {
        return connection;
    }

    int rails() {
        return addresses.size();
    }

    /** One line naming the transport, for summaries. */
    String describe() {
        if (ucxTls != null) {
            return rails() + " rails, ucx provider, UCX " + ucxTls + " between processes (TCP connection manager)";
        }
        return rails() + " rails, soft provider, IP (net) fabric, local " + String.join(",", addresses);
    }

    /** Payload bytes this end completed per rail so far. */
    long[] railBytes() {
        return probe.railBytes();
    }

    /**
     * The striping weights this side sends with (one share per rail, see
     * {@code RailsChannelFactory.weights}), or null when its policy has none (round robin).
     */
    double @Nullable [] weights() {
        return policy instanceof RailsChannelFactory rails ? rails.weights(connection) : null;
    }

    long creditStalls() {
        return probe.creditStalls();
    }

    /**
     * Closes gracefully: waits up to {@code timeout} for the connection to close (messages in flight
     * delivered, CLOSE exchanged), then releases the node and the provider.
     */
    void closeGracefully(Duration timeout) {
        connection.close();
        try {
            connection.onClose().onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(timeout);
        } catch (IllegalStateException timedOut) {
            connection.abort();
        }
        close();
    }

    @Override
    public void close() {
        try {
            connection.abort();
        } finally {
            closeQuietly(node, provider);
        }
    }

    /** An IP address (or host name) and a port, parsed from {@code host:port}. */
    record HostPort(String host, int port) {
        /**
         * @throws UserError naming the flag and the text when it is not {@code host:port} with a port in 0..65535
         */
        static HostPort parse(String flag, String text) {
            int colon = text.lastIndexOf(':');
            if (colon <= 0 || colon == text.length() - 1) {
                throw new UserError(flag + " " + text + " is not host:port; e.g. " + flag + " 10.77.1.2:7500");
            }
            int port;
            try {
                port = Integer.parseInt(text.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new UserError(flag + " " + text + ": the port is not a number; e.g. " + flag + " 10.77.1.2:7500");
            }
            if (port < 0 || port > 65535) {
                throw new UserError(flag + " " + text + ": port must be in 0..65535 but it was " + port);
            }
            String host = text.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            return new HostPort(host, port);
        }

        @Override
        public String toString() {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /**
     * Parses {@code --addresses}: comma-separated local IPs, one per rail.
     *
     * @throws UserError if empty, with an empty entry, or with more than 16 entries
     */
    static List<String> parseAddresses(String text) {
        List<String> out = new ArrayList<>();
        for (String a : text.split(",", -1)) {
            String t = a.trim();
            if (t.isEmpty()) {
                throw new UserError("--addresses " + text + " has an empty entry; give one local IP per rail, e.g. --addresses 10.77.1.1,10.77.2.1");
            }
            out.add(t.toLowerCase(Locale.ROOT));
        }
        if (out.size() > 16) {
            throw new UserError("--addresses gives " + out.size() + " rails; at most 16");
        }
        return out;
    }
}
