package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.ChannelProvider;
import io.rdmaflux.core.channel.ChannelSetup;
import io.rdmaflux.core.channel.QpTimeouts;
import io.rdmaflux.core.frame.HandshakeCodec;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * How a node opens its connections: one channel per rail of the kind the connecting side asks for
 * ({@link ConnectionSpec#channelKind(int)}) and the accepting node offers, the handshake in the
 * connection manager's private data ({@link HandshakeCodec}: buffers, credits, largest message,
 * rendezvous, the kind of each rail), then the connection registered with the node. A kind the
 * accepting node does not offer, a rail count above its ports, or a peer's answer that differs from
 * what was asked fails the connect with an error naming the value and the fix; every channel opened for
 * it is closed.
 *
 * <p><b>Rails:</b> a connecting side uses the node rails its spec picks ({@link ConnectionSpec#rails(String...)}),
 * or its first {@code n}; an accepting side its first {@code n}. Each channel is opened in the protection
 * domain of its rail's device, with that device's shared CQ. A connection whose rails span several devices
 * uses the WRITE rendezvous (its CTS carries one rkey per rail): a side spanning devices asks for WRITE, and
 * answers that it has no READ rendezvous.
 *
 * <p><b>Concurrency:</b> {@link #connect} on any thread when subscribed; {@link #accept} on the
 * connection manager's thread.
 */
final class ConnectionEstablishment {
    /** The node's channel settings, the same for every rail. */
    record Settings(int bufferBytes, int receiveBuffers, int controlBuffers, int sendBuffers, int creditThreshold,
                    QpTimeouts timeouts, int rendezvousBuffers, int maxMessageBytes, EagerSpec eager, int eagerPollingSet) {
    }

    /**
     * Set on a rail's kind code in the handshake: the connecting side takes {@link ChannelKind#fallback()}
     * if the accepting node does not offer the kind (the kind was a default, not asked for explicitly).
     */
    static final int FALLBACK_ALLOWED = 0x80;

    private final RdmaNode node;
    private final ConnectionManager cm;
    private final NodeRails rails;
    private final Settings settings;
    /** The channel kinds the node offers, each with its provider. */
    private final Map<ChannelKind, ChannelProvider> providers;
    private final ChannelFactory acceptFactory;
    private final io.rdmaflux.core.internal.srq.@Nullable NodeSharedBuffers sharedBuffers;
    /** One shared CQ per device of the node (by device index), or null: one CQ per channel. */
    private final io.rdmaflux.core.internal.cq.SharedCompletionQueue @Nullable [] sharedCqs;

    ConnectionEstablishment(RdmaNode node, ConnectionManager cm, NodeRails rails, Settings settings,
                            Map<ChannelKind, ChannelProvider> providers, ChannelFactory acceptFactory,
                            io.rdmaflux.core.internal.srq.@Nullable NodeSharedBuffers sharedBuffers,
                            io.rdmaflux.core.internal.cq.SharedCompletionQueue @Nullable [] sharedCqs) {
        this.sharedBuffers = sharedBuffers;
        this.sharedCqs = sharedCqs;
        this.node = node;
        this.cm = cm;
        this.rails = rails;
        this.settings = settings;
        this.providers = providers;
        this.acceptFactory = acceptFactory;
    }

    CompletableFuture<CmParams> accept(PortAddress from, CmParams request, Consumer<RdmaConnection> emit) {
        List<Channel> created = new ArrayList<>();
        try {
            node.ensureOpen();
            HandshakeCodec peer = HandshakeCodec.decode(request.privateData());
            int rails = request.endpoints().size();
            if (rails != peer.rails() || rails > this.rails.railCount()) {
                throw new RdmaException(RdmaException.Category.CONFIGURATION, "peer " + from + " asks for " + rails
                    + " rails but node " + node.name() + " has " + this.rails.railCount() + " ports (rails " + this.rails + ")"
                    + "; use ConnectionSpec.rails(n) with n <= " + this.rails.railCount());
            }
            int[] nodeRails = new int[rails];
            for (int r = 0; r < rails; r++) {
                nodeRails[r] = r;
            }
            RailDevices devices = this.rails.railDevices(nodeRails);
            List<ChannelKind> kinds = new ArrayList<>(rails);
            for (int r = 0; r < rails; r++) {
                kinds.add(offeredKind(from, r, peer.kindCodes().get(r)));
            }
            String unfit = overDevicesUnfit(devices, kinds);
            if (unfit != null) {
                throw new RdmaException(RdmaException.Category.CONFIGURATION, "peer " + from + " asks for " + unfit);
            }
            for (int r = 0; r < rails; r++) {
                created.add(newChannel(r, nodeRails[r], kinds.get(r), settings.eager()));
            }
            List<QpEndpoint> endpoints = new ArrayList<>();
            for (int r = 0; r < rails; r++) {
                Channel sc = created.get(r);
                sc.connect(request.endpoints().get(r), peer.bufferBytes(), peer.receiveBuffers(), peer.initialCredits(), false);
                endpoints.add(sc.localEndpoint());
            }
            // the connecting side's mode, if both sides and every rail's kind have the READ rendezvous
            RendezvousMode mode = devices.spansDevices() ? RendezvousMode.WRITE
                : agreed(RendezvousMode.ofCode(peer.rendezvousModeCode()), peer, kinds);
            DefaultRdmaConnection c = node.register(created, acceptFactory, peer.maxMessageBytes(), peer.rendezvousBuffers() > 0,
                mode, devices, "accepted from " + from);
            emit.accept(c);
            return CompletableFuture.completedFuture(new CmParams(endpoints, handshake(kinds, false, mode, devices).encode()));
        } catch (RuntimeException e) {
            created.forEach(Channel::close);
            return CompletableFuture.failedFuture(e);
        }
    }

    Mono<RdmaConnection> connect(PortAddress address, ConnectionSpec spec) {
        return Mono.defer(() -> {
            node.ensureOpen();
            int[] nodeRails;
            try {
                nodeRails = rails.select(spec, node.name());
            } catch (IllegalArgumentException e) {
                return Mono.error(e);
            }
            if (spec.isLazy()) {
                // seed 003 3.2: nothing is made until the connection is used; then it is the node's eager
                // connect, under the spec's ConnectRetry like any other (a peer not there yet is retried)
                return Mono.just(new io.rdmaflux.core.internal.lazy.LazyConnection(address.toString(), settings.maxMessageBytes(),
                    () -> node.connect(address, spec.lazy(false))));
            }
            List<Channel> created = new ArrayList<>();
            try {
                List<QpEndpoint> endpoints = new ArrayList<>();
                List<ChannelKind> kinds = new ArrayList<>(spec.rails());
                EagerSpec eager = spec.eager() != null ? spec.eager() : settings.eager();
                // a default eager rail may fall back to RC send/receive; an explicit kind is insisted on
                boolean defaultEager = !spec.channelKindsExplicit() && eager.enabled() && providers.containsKey(ChannelKind.EAGER_RDMA);
                for (int r = 0; r < spec.rails(); r++) {
                    ChannelKind kind = defaultEager ? ChannelKind.EAGER_RDMA : spec.channelKind(r);
                    if (!providers.containsKey(kind)) {
                        throw new IllegalArgumentException("spec asks for channel kind " + kind + " on rail " + r + " but node " + node.name()
                            + " offers " + providers.keySet() + "; add its provider with RdmaNode.Builder.channelProvider(..)");
                    }
                    kinds.add(kind);
                }
                String unfit = overDevicesUnfit(rails.railDevices(nodeRails), kinds);
                if (unfit != null) {
                    throw new IllegalArgumentException("spec asks for " + unfit);
                }
                for (int r = 0; r < spec.rails(); r++) {
                    Channel sc = newChannel(r, nodeRails[r], kinds.get(r), eager);
                    created.add(sc);
                    endpoints.add(sc.localEndpoint());
                }
                RailDevices devices = rails.railDevices(nodeRails);
                // one rkey per rail travels in the CTS only: the READ rendezvous's RTS_READ has one
                RendezvousMode askedMode = devices.spansDevices() ? RendezvousMode.WRITE : spec.rendezvousMode();
                CmParams request = new CmParams(endpoints, handshake(kinds, defaultEager, askedMode, devices).encode());
                return Mono.fromFuture(cm.connect(address, request, spec.connectTimeoutNs()))
                    .map(reply -> {
                        HandshakeCodec peer = HandshakeCodec.decode(reply.privateData());
                        if (reply.endpoints().size() != created.size()) {
                            throw new RdmaException(RdmaException.Category.PROTOCOL, "peer at " + address + " accepted with "
                                + reply.endpoints().size() + " rails but " + created.size() + " were asked");
                        }
                        for (int r = 0; r < created.size(); r++) {
                            int answered = peer.kindCodes().get(r);
                            ChannelKind asked = kinds.get(r);
                            if (answered != asked.wireCode()) {
                                if (!defaultEager || answered != asked.fallback().wireCode()) {
                                    throw new RdmaException(RdmaException.Category.PROTOCOL, "peer at " + address + " answered channel kind code "
                                        + answered + " on rail " + r + " but " + asked + " was asked");
                                }
                                // the peer does not offer the default kind: this rail runs its fallback channel
                                created.set(r, created.get(r).downgrade());
                            }
                        }
                        for (int r = 0; r < created.size(); r++) {
                            created.get(r).connect(reply.endpoints().get(r), peer.bufferBytes(), peer.receiveBuffers(),
                                peer.initialCredits(), true);
                        }
                        return (RdmaConnection) node.register(created, spec.channelFactory(), peer.maxMessageBytes(),
                            peer.rendezvousBuffers() > 0,
                            // the kinds the rails run now: a rail downgraded to its fallback answers for that kind
                            agreed(askedMode, peer, created.stream().map(Channel::kind).toList()), devices, "to " + address);
                    })
                    .doOnError(e -> created.forEach(Channel::close))
                    .doOnCancel(() -> created.forEach(Channel::close));
            } catch (RuntimeException e) {
                created.forEach(Channel::close);
                return Mono.error(e);
            }
        });
    }

    private HandshakeCodec handshake(List<ChannelKind> kinds, boolean fallbackAllowed, RendezvousMode mode, RailDevices devices) {
        return new HandshakeCodec(kinds.size(), settings.bufferBytes(), settings.receiveBuffers(), 0, settings.maxMessageBytes(),
            settings.rendezvousBuffers(),
            kinds.stream().map(k -> k.wireCode() | (fallbackAllowed && k.fallback() != k ? FALLBACK_ALLOWED : 0)).toList(),
            // rails over several devices: no READ rendezvous (its RTS_READ carries one rkey), so the peer uses WRITE too
            HandshakeCodec.features(!devices.spansDevices(), mode.code()));
    }

    /**
     * The rendezvous mode a connection uses: {@code asked} if the peer speaks the READ rendezvous and
     * every rail's channel kind can post RDMA READs, else WRITE (the fallback for an older peer or kind).
     */
    static RendezvousMode agreed(RendezvousMode asked, HandshakeCodec peer, List<ChannelKind> kinds) {
        if (asked == RendezvousMode.WRITE || !peer.readRendezvous()) {
            return RendezvousMode.WRITE;
        }
        for (ChannelKind k : kinds) {
            if (!k.capabilities().rdmaRead()) {
                return RendezvousMode.WRITE;
            }
        }
        return asked;
    }

    /**
     * Why {@code kinds} cannot run on rails over several devices, or null: a rail's CTS must carry one rkey per
     * rail, which the reliable-UD channel's grant does not.
     */
    private static @Nullable String overDevicesUnfit(RailDevices devices, List<ChannelKind> kinds) {
        if (!devices.spansDevices()) {
            return null;
        }
        for (int r = 0; r < kinds.size(); r++) {
            if (kinds.get(r) == ChannelKind.RELIABLE_UD) {
                return "channel kind " + ChannelKind.RELIABLE_UD + " on rail " + r + " of a connection whose rails span several devices;"
                    + " use RC_SEND_RECV or EAGER_RDMA channels there, or rails of one device (ConnectionSpec.rails(..) by name)";
            }
        }
        return null;
    }

    /** The kind a peer's handshake asks for on {@code rail}, if this node offers it. */
    private ChannelKind offeredKind(PortAddress from, int rail, int code) {
        ChannelKind kind;
        try {
            kind = ChannelKind.ofWireCode(code & ~FALLBACK_ALLOWED);
        } catch (IllegalArgumentException e) {
            throw new RdmaException(RdmaException.Category.CONFIGURATION, "peer " + from + " asks for rail " + rail + ": " + e.getMessage());
        }
        if (!providers.containsKey(kind) && (code & FALLBACK_ALLOWED) != 0 && providers.containsKey(kind.fallback())) {
            return kind.fallback();
        }
        if (!providers.containsKey(kind)) {
            throw new RdmaException(RdmaException.Category.CONFIGURATION, "peer " + from + " asks for channel kind " + kind
                + " on rail " + rail + " but node " + node.name() + " offers " + providers.keySet()
                + "; add its provider with RdmaNode.Builder.channelProvider(..)");
        }
        return kind;
    }

    /** The channel of connection rail {@code rail} on node rail {@code nodeRail}, in its device's protection domain. */
    private Channel newChannel(int rail, int nodeRail, ChannelKind kind, EagerSpec eager) {
        // CTS and FIN frames take no credit: each rendezvous buffer can have one of each in flight per rail
        Settings s = settings;
        ChannelSetup setup = new ChannelSetup(rail, rails.pdOfRail(nodeRail), rails.port(nodeRail), s.bufferBytes(), s.receiveBuffers(),
            s.controlBuffers() + 2 * s.rendezvousBuffers(), s.sendBuffers(), s.creditThreshold(), s.timeouts(), s.rendezvousBuffers(),
            eager, s.eagerPollingSet());
        ChannelProvider provider = providers.get(kind);
        if ((sharedBuffers != null || sharedCqs != null) && provider == io.rdmaflux.core.internal.rc.RcChannelProvider.INSTANCE) {
            // the node's RC channels share one SRQ-backed receive pool and one send region per rail, and/or
            // one CQ per device
            return io.rdmaflux.core.internal.rc.RcChannelProvider.INSTANCE.open(setup,
                sharedBuffers == null ? null : sharedBuffers.rail(nodeRail, rails.port(nodeRail), rails.pdOfRail(nodeRail)),
                sharedCqs == null ? null : sharedCqs[rails.deviceOf(nodeRail)]);
        }
        if (sharedBuffers != null && provider instanceof io.rdmaflux.core.internal.srq.SharedPoolChannelProvider sp) {
            // a kind whose channels take their buffers from the node's shared pools too (reliable UD): a receive
            // pool of its own per rail, the rail's shared send region
            return sp.open(setup, sharedBuffers.rail(nodeRail, rails.port(nodeRail), rails.pdOfRail(nodeRail), sp));
        }
        return provider.open(setup);
    }
}
