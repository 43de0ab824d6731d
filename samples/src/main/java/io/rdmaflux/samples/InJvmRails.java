package io.rdmaflux.samples;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Two hosts in one JVM joined by rails: by default one soft provider on a private in-JVM (mem) fabric
 * with a sender NIC and a receiver NIC, each with one port per rail; port {@code i} of both NICs
 * gets rail {@code i}'s bandwidth and latency. Both nodes share one progress thread (SHARED mode)
 * and the provider runs its NIC engines on one more, so the whole setup needs two threads. On the
 * {@code ucx} provider ({@link Settings#on}) each host has its own provider (and engine thread) and
 * the rails are UCX's, unshaped ({@link InJvmNics}).
 *
 * <p>{@link #close()} closes the connection, both nodes and the providers; no thread stays behind.
 */
public final class InJvmRails implements BenchLink {
    private static final AtomicInteger FABRICS = new AtomicInteger();

    private final InJvmNics nics;
    private final RdmaNode senderNode;
    private final RdmaNode receiverNode;
    private final RdmaConnection sender;
    private final RdmaConnection receiver;
    private final RailProbe probe;
    private final List<Long> railBytesPerSec;
    private final SoftRailLayout layout;

    private InJvmRails(Settings s) {
        this.railBytesPerSec = List.copyOf(s.railBytesPerSec);
        int rails = railBytesPerSec.size();
        SoftRailLayout layout = s.layout != null ? s.layout : SoftRailLayout.ofCount(rails, 1);
        if (layout.railCount() != rails) {
            throw new UserError("the rails (" + layout.describe() + ") are " + layout.railCount() + " but " + rails
                + " rail rates were given; give one rate per rail");
        }
        this.layout = layout;
        nics = InJvmNics.open(s.provider, s.fabric, layout, railBytesPerSec, s.latencyNs, s.bufferBytes);
        RdmaNode tx = null;
        RdmaNode rx = null;
        try {
            if ("soft".equals(nics.provider())) {
                tx = node("sender", nics.senderProvider(), layout.senderRails(), s);
                rx = node("receiver", nics.receiverProvider(), layout.receiverRails(), s);
            } else {
                tx = node("sender", nics.senderProvider(), List.of(io.rdmaflux.core.RailSpec.of(nics.senderDevice(), 1)), s, rails);
                rx = node("receiver", nics.receiverProvider(), List.of(io.rdmaflux.core.RailSpec.of(nics.receiverDevice(), 1)), s, rails);
            }
            probe = new RailProbe(s.policy);
            RdmaServer server = rx.bind(nics.receiverAddress());
            Mono<RdmaConnection> accepted = server.accept().next();
            RdmaConnection c = tx.connect(server.address(), TransportOption.apply(ConnectionSpec.rails(rails).striping(probe), s.channelKinds)).block(Duration.ofSeconds(10));
            RdmaConnection a = accepted.block(Duration.ofSeconds(10));
            server.close();
            if (c == null || a == null) {
                throw new UserError("the in-JVM rails did not connect within 10 s");
            }
            this.senderNode = tx;
            this.receiverNode = rx;
            this.sender = c;
            this.receiver = a;
        } catch (RuntimeException e) {
            if (tx != null) {
                tx.close();
            }
            if (rx != null) {
                rx.close();
            }
            nics.close();
            throw e;
        }
    }

    /**
     * A soft provider on a private in-JVM (mem) fabric with two devices, {@code tx0} and {@code rx0},
     * one port per rail; port {@code i + 1} of both shaped to {@code railBytesPerSec.get(i)}
     * ({@link Long#MAX_VALUE}: unshaped) and {@code latencyNs}. It runs its NIC engines on its own thread.
     */
    static SoftProvider provider(List<Long> railBytesPerSec, long latencyNs, int bufferBytes) {
        return provider(SoftRailLayout.ofCount(railBytesPerSec.size(), 1), railBytesPerSec, latencyNs, bufferBytes);
    }

    /**
     * As {@link #provider(List, long, int)} with the NICs {@code layout} gives each host ({@code tx0..}, {@code rx0..}):
     * the port of rail {@code i} on the sender's device and the same port of the receiver's shaped to
     * {@code railBytesPerSec.get(i)} (several paths of one port: the first path's rate).
     */
    static SoftProvider provider(SoftRailLayout layout, List<Long> railBytesPerSec, long latencyNs, int bufferBytes) {
        int id = FABRICS.incrementAndGet();
        SoftProvider p = SoftProvider.builder().name("samples" + id).fabric(SoftFabric.mem("samples-" + id))
            .deviceNames(layout.deviceNames()).portsPerDevice(layout.portsPerDevice()).threadingMode(ThreadingMode.DEDICATED)
            .threadPerDevice(layout.nicThreadPerDevice()).build();
        try {
            List<int[]> ports = layout.railPorts();
            // last rail first: of several paths on one port, the first path's rate is set last and stays
            for (int r = ports.size() - 1; r >= 0; r--) {
                int[] dp = ports.get(r);
                RailConfig rail = rail(railBytesPerSec.get(r), latencyNs, bufferBytes);
                p.softDevice(dp[0]).softPort(dp[1]).setRail(rail);
                p.softDevice(layout.devices() + dp[0]).softPort(dp[1]).setRail(rail);
            }
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
        return p;
    }

    /** One rail's model: {@code bytesPerSec} ({@link Long#MAX_VALUE}: unshaped) and one-way {@code latencyNs}. */
    static RailConfig rail(long bytesPerSec, long latencyNs, int bufferBytes) {
        RailConfig.Builder rail = RailConfig.builder().latencyNs(latencyNs).bandwidthBytesPerSec(bytesPerSec);
        if (bytesPerSec != Long.MAX_VALUE) {
            // a burst of a few buffers keeps shaping smooth at sample rates of 100 ms
            rail.burstBytes(Math.max(4L * bufferBytes, 64 * 1024));
        }
        return rail.build();
    }

    private static RdmaNode node(String name, RdmaProvider provider, List<io.rdmaflux.core.RailSpec> rails, Settings s) {
        return builder(name, provider, s).rails(rails).build();
    }

    /** A node on {@code rails} ports from port 1 of the one device {@code rails.get(0)} names (the ucx hosts). */
    private static RdmaNode node(String name, RdmaProvider provider, List<io.rdmaflux.core.RailSpec> device, Settings s, int rails) {
        int[] ports = new int[rails];
        for (int i = 0; i < rails; i++) {
            ports[i] = i + 1;
        }
        return builder(name, provider, s).device(device.get(0).device()).ports(ports).build();
    }

    private static RdmaNode.Builder builder(String name, RdmaProvider provider, Settings s) {
        return RdmaNode.builder().provider(provider).name(name)
            .bufferBytes(s.bufferBytes).receiveBuffers(s.receiveBuffers).sendBuffers(s.receiveBuffers)
            .maxMessageBytes(s.maxMessageBytes).rendezvousBuffers(s.rendezvousBuffers).eager(s.eager).threadingMode(ThreadingMode.SHARED);
    }

    /** Opens the rails and connects sender to receiver. */
    public static InJvmRails open(Settings settings) {
        return new InJvmRails(settings);
    }

    /** The sending side of the connection. */
    public RdmaConnection sender() {
        return sender;
    }

    /** The sending node. */
    public RdmaNode senderNode() {
        return senderNode;
    }

    /** The receiving node. */
    public RdmaNode receiverNode() {
        return receiverNode;
    }

    /** The receiving side of the connection. */
    public RdmaConnection receiver() {
        return receiver;
    }

    public int rails() {
        return railBytesPerSec.size();
    }

    /** Rail {@code i}'s shaped bandwidth in bytes/s ({@link Long#MAX_VALUE}: unshaped). */
    public long railBytesPerSec(int i) {
        return railBytesPerSec.get(i);
    }

    /** Payload bytes completed per rail so far. */
    public long[] railBytes() {
        return probe.railBytes();
    }

    /** Credit-stall episodes of the sender so far (see {@link RailProbe}). */
    public long creditStalls() {
        return probe.creditStalls();
    }

    public String policy() {
        return probe.toString();
    }

    /** What the rails run on, e.g. {@code soft provider, in-JVM mem fabric}, and on how many devices. */
    public String describe() {
        return nics.describe() + (layout.devices() > 1 || layout.railCount() > 1 ? ", " + layout.describe() : "");
    }

    @Override
    public void close() {
        try {
            sender.abort();
            receiver.abort();
        } finally {
            senderNode.close();
            receiverNode.close();
            nics.close();
        }
    }

    /**
     * What {@link #open} builds.
     *
     * @param railBytesPerSec one bandwidth per rail in bytes/s ({@link Long#MAX_VALUE}: unshaped)
     * @param latencyNs       one-way latency of every rail, ns
     * @param bufferBytes     send/receive buffer size, bytes
     * @param receiveBuffers  receive (and send) buffers per rail
     * @param maxMessageBytes largest message, bytes
     * @param rendezvousBuffers registered whole-message buffers per node and direction: how many messages
     *                        above one buffer can be in flight (0: such messages travel as fragments)
     * @param policy          the multiplexing/striping policy
     * @param eager           the eager RDMA ring's settings (used where both nodes offer it)
     * @param provider        the NICs' provider, {@code soft} or {@code ucx} ({@link InJvmNics})
     * @param fabric          for {@code ucx}: {@code sm} (null: the default) or {@code tcp}; null for soft
     * @param channelKinds    the channel kind of every rail (one) or of each rail (one per rail), insisted on; null for
     *                        the nodes' default (eager RDMA where offered, else RC send/receive)
     * @param layout          the soft hosts' NICs and which of their ports are the rails (null: one NIC per host, port
     *                        {@code i + 1} rail {@code i})
     */
    public record Settings(List<Long> railBytesPerSec, long latencyNs, int bufferBytes, int receiveBuffers, int maxMessageBytes,
                           int rendezvousBuffers, ChannelFactory policy, EagerSpec eager, String provider, @Nullable String fabric,
                           @Nullable List<ChannelKind> channelKinds, @Nullable SoftRailLayout layout) {
        /** With the default layout: one NIC per host. */
        public Settings(List<Long> railBytesPerSec, long latencyNs, int bufferBytes, int receiveBuffers, int maxMessageBytes,
                        int rendezvousBuffers, ChannelFactory policy, EagerSpec eager, String provider, @Nullable String fabric,
                        @Nullable List<ChannelKind> channelKinds) {
            this(railBytesPerSec, latencyNs, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, eager, provider, fabric,
                channelKinds, null);
        }

        /** These settings with the soft hosts' NICs laid out as {@code layout} (null: one NIC per host). */
        Settings layout(@Nullable SoftRailLayout layout) {
            return new Settings(railBytesPerSec, latencyNs, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, eager,
                provider, fabric, channelKinds, layout);
        }

        /** On the soft provider's in-JVM fabric, with the nodes' default channel kinds. */
        public Settings(List<Long> railBytesPerSec, long latencyNs, int bufferBytes, int receiveBuffers, int maxMessageBytes,
                        int rendezvousBuffers, ChannelFactory policy, EagerSpec eager) {
            this(railBytesPerSec, latencyNs, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, eager, "soft", null, null);
        }

        /** On the soft provider's in-JVM fabric, with the eager RDMA ring at its defaults. */
        public Settings(List<Long> railBytesPerSec, long latencyNs, int bufferBytes, int receiveBuffers, int maxMessageBytes,
                        int rendezvousBuffers, ChannelFactory policy) {
            this(railBytesPerSec, latencyNs, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, EagerSpec.DEFAULTS);
        }

        /** These settings on {@code provider} ({@code soft} or {@code ucx}) and, for ucx, {@code fabric} ({@code sm} or {@code tcp}). */
        public Settings on(String provider, @Nullable String fabric) {
            return new Settings(railBytesPerSec, latencyNs, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, eager,
                provider, fabric, channelKinds, layout);
        }

        /** These settings with {@code kinds} (see {@link #channelKinds()}; null: the nodes' default). */
        public Settings channelKinds(@Nullable List<ChannelKind> kinds) {
            return new Settings(railBytesPerSec, latencyNs, bufferBytes, receiveBuffers, maxMessageBytes, rendezvousBuffers, policy, eager,
                provider, fabric, kinds == null ? null : List.copyOf(kinds), layout);
        }
    }
}
