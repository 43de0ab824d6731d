package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.ChannelProvider;
import io.rdmaflux.core.channel.QpTimeouts;
import io.rdmaflux.core.engine.ProgressEngine;
import io.rdmaflux.core.engine.ProgressIdleStrategy;
import io.rdmaflux.core.internal.buffer.MessageBufferPool;
import io.rdmaflux.core.internal.cq.SharedCompletionQueue;
import io.rdmaflux.core.internal.regcache.RegistrationCache;
import io.rdmaflux.core.internal.srq.NodeSharedBuffers;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An rdmaflux endpoint: the ports of a provider's device(s) used as rails, the buffer sizes, and
 * the progress engine that runs every connection of the node.
 *
 * <pre>{@code
 * RdmaNode node = RdmaNode.builder().provider(provider).device("soft0").ports(1, 2)
 *     .bufferBytes(8192).receiveBuffers(64).sendBuffers(64).threadingMode(ThreadingMode.DEDICATED).build();
 * RdmaServer server = node.bind(PortAddress.parse("mem://soft0:7000"));
 * Mono<RdmaConnection> c = other.connect(server.address(), ConnectionSpec.defaults());
 * }</pre>
 *
 * <p><b>Several devices:</b> {@link Builder#rails(RailSpec...)} takes ports of one or more devices (HCAs),
 * and several paths (queue pairs) per port (seed 000 &sect;4.2), e.g. {@code rails(RailSpec.of("mlx5_0", 1),
 * RailSpec.of("mlx5_1", 1))}; a connection stripes over the rails it uses
 * ({@link ConnectionSpec#rails(String...)} picks them by name), and a device that fails fails its rails over
 * to the others'. The node allocates one protection domain per device and registers its rendezvous pools
 * on every device (one registration per device); each rail uses its device's keys. Memory registered with
 * {@link #registerMemory}, messages sent by reference and one-sided RDMA use the first device: on a
 * connection whose rails span devices large messages are staged (one copy) and one-sided RDMA is refused.
 *
 * <p><b>Memory per rail of a connection:</b> {@code (receiveBuffers + controlBuffers + sendBuffers) * bufferBytes}
 * registered bytes, plus one buffer of the message length per reassembled (multi-fragment) message
 * until it is released. Per node: the two rendezvous pools ({@code 2 * rendezvousBuffers * maxMessageBytes})
 * and at most {@link Builder#registrationCacheBytes} of application memory kept registered by the
 * registration cache (direct-buffer messages sent by reference), plus the regions the application
 * registered itself.
 *
 * <p><b>Threading:</b> {@link ThreadingMode#DEDICATED} runs the node on its own thread
 * {@code rdmaflux-progress-<name>}; SHARED on the JVM-wide {@code rdmaflux-progress-shared};
 * INVOKER runs nothing by itself: call {@link #invoke()}. If the provider itself runs in INVOKER
 * mode, the node drives it ({@code provider.progress(nowNs)}) in its duty cycle unless
 * {@link Builder#driveProvider(boolean)} says otherwise (two nodes sharing one provider: let one
 * drive it).
 *
 * <p><b>IP fabric:</b> give the node an INVOKER-mode soft provider (option {@code threading=invoker}):
 * its progress thread then drives the soft NIC too and, when idle, blocks in the NIC's socket
 * selector, so an arriving frame or work handed in by another thread wakes it at once (about 15 µs
 * for an 8-byte round trip over loopback between two processes). With a DEDICATED provider the
 * node's and the NIC's threads each park in back-off between polls (hundreds of µs per round trip).
 *
 * <p><b>Concurrency:</b> thread-safe. <b>Lifecycle:</b> {@link #close()} aborts every connection,
 * frees every registered buffer and stops the node's thread; received messages still held become
 * invalid and are reported as a leak to the {@link RdmaLeakReporter}.
 */
public final class RdmaNode implements AutoCloseable {
    /** Default budget of the registration cache, bytes (64 MiB). */
    public static final long DEFAULT_REGISTRATION_CACHE_BYTES = 64L << 20;
    /**
     * Message credits a node grants per free DATA receive buffer by default, on every kind of rail (RC,
     * reliable UD, RC + DR, eager RDMA); {@link Builder#messageCreditsPerBuffer} sets another.
     */
    public static final int DEFAULT_MESSAGE_CREDITS_PER_BUFFER = 8;

    private final String name;
    private final RdmaProvider provider;
    /** What the builder gave, checked and with its defaults resolved. */
    private final NodeSettings settings;
    /** The devices, their protection domains and the rails on them. */
    private final NodeRails rails;
    /** The first device's protection domain: the registration cache, user regions and one-sided RDMA use it. */
    private final ProtectionDomain pd;
    private final ProgressEngine engine;
    private final NanoClock clock;
    private final NodeRendezvousPools rendezvousPools;
    /** Application memory sent by reference, registered once (seed 001 &sect;3.1, seed 000 &sect;5.1). */
    private final RegistrationCache registrationCache;
    /** Opens this node's connections: channels per rail, the handshake (channel kind per rail). */
    private final ConnectionEstablishment establishment;
    /** Connects waiting for their next attempt ({@link ConnectRetry}), timed by the engine. */
    private final ConnectRetries connectRetries;
    private final NodeSharedQueues shared;
    private final NodeConnections connections;
    private final NodeServers servers;
    private volatile boolean closed;
    /** Taken by the one {@link #close()} call that frees the node. */
    private final AtomicBoolean closeClaimed = new AtomicBoolean();

    private RdmaNode(NodeSettings settings) {
        this.settings = settings;
        this.provider = settings.provider;
        this.name = settings.name;
        this.rails = NodeRails.open(provider, settings.railSpecs, settings.bufferBytes);
        this.clock = settings.clock;
        this.pd = rails.pds().get(0);
        this.rendezvousPools = new NodeRendezvousPools(name, rails.pds(), settings.maxMessageBytes, settings.rendezvousBuffers, this::isClosed);
        // REMOTE_READ: a receiver pulls a message from it by the READ rendezvous
        this.registrationCache = new RegistrationCache(pd, settings.registrationCacheBytes, Access.REMOTE_READ);
        try {
            this.shared = NodeSharedQueues.open(settings, rails);
        } catch (RuntimeException e) {
            rails.close();
            throw e;
        }
        this.establishment = new ConnectionEstablishment(this, provider.connectionManager(), rails, settings.establishment(),
            settings.channelProviders, settings.acceptChannelFactory, shared.buffers(), shared.completionQueues());
        this.servers = new NodeServers(provider.connectionManager(), establishment);
        this.engine = new ProgressEngine(name, settings.threadingMode, clock, settings.idleStrategy, Throwable::printStackTrace);
        this.connections = new NodeConnections(engine);
        this.connectRetries = new ConnectRetries(name, clock);
        engine.add(connectRetries);
        if (settings.driveProvider) {
            engine.add(new ProgressAgent() {
                @Override
                public int doWork(long nowNs) {
                    return provider.progress(nowNs);
                }

                @Override
                public String roleName() {
                    return "provider-" + provider.name();
                }
            });
            // what the connections posted in a cycle is written before the next cycle's polls (an answer given in
            // onNext goes out at once); the provider's pass at the start of the next cycle would do it otherwise
            engine.endOfCycle(new ProgressAgent() {
                @Override
                public int doWork(long nowNs) {
                    return provider.transmitPosted(nowNs);
                }

                @Override
                public String roleName() {
                    return "provider-" + provider.name() + "-doorbells";
                }
            });
        }
        SharedCompletionQueue[] sharedCqs = shared.completionQueues();
        if (sharedCqs != null) {
            // polled before the connections in each duty cycle: they hand their completions to them
            for (SharedCompletionQueue cq : sharedCqs) {
                engine.add(cq);
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public String name() {
        return name;
    }

    public NanoClock clock() {
        return clock;
    }

    public RdmaProvider provider() {
        return provider;
    }

    /** The ports used as rails, in rail order (a port with several paths once per path). */
    public List<Port> ports() {
        return rails.ports();
    }

    /**
     * The names of the rails, in rail order: {@code device:port}, or {@code device:port/p} for path {@code p} of a
     * port given several paths; {@link ConnectionSpec#rails(String...)} picks rails by them.
     */
    public List<String> railNames() {
        return rails.names();
    }

    /** The names of the devices the rails are on, in the order their first rail was given. */
    public List<String> deviceNames() {
        return rails.devices().stream().map(io.rdmaflux.verbs.Device::name).toList();
    }

    ProgressEngine engine() {
        return engine;
    }

    /**
     * Diagnostics: whether this node's progress engine skips {@code connection} in busy duty cycles now: it
     * is idle, and every work that can reach it comes with a signal (README "Many peers"). Call it on the
     * progress thread, or between {@link #invoke()} calls in INVOKER mode; elsewhere the answer is racy.
     *
     * @throws IllegalArgumentException if {@code connection} is not one of this node's open connections
     */
    public boolean skipsWhileIdle(RdmaConnection connection) {
        if (!(connection instanceof DefaultRdmaConnection c) || !connections.contains(c)) {
            throw new IllegalArgumentException(connection + " is not an open connection of node " + name
                + "; ask the node that opened or accepted it");
        }
        return engine.isCold(c);
    }

    public ThreadingMode threadingMode() {
        return engine.mode();
    }

    /**
     * The most message credits this node grants a peer per free DATA receive buffer
     * ({@link Builder#messageCreditsPerBuffer}; without it {@link #DEFAULT_MESSAGE_CREDITS_PER_BUFFER}): a
     * stalled subscriber can hold up to this many messages per receive buffer (small ones travel packed).
     */
    public int messageCreditsPerBuffer() {
        return settings.messageCreditsPerBuffer();
    }

    /** Ends the progress thread's idling: work was handed in from another thread. */
    void wake() {
        engine.wake();
    }

    /** Whether the calling thread runs this node's duty cycle now. */
    boolean isProgressThread() {
        return engine.isProgressThread();
    }

    /**
     * INVOKER mode: runs one duty cycle of every connection (and the provider, if the node drives it)
     * on the calling thread; Reactor signals are emitted from it.
     *
     * @return work done (0 when idle)
     * @throws IllegalStateException in another mode
     */
    public int invoke() {
        return engine.invoke();
    }

    /**
     * Listens at {@code address} ({@code service} 0 picks a free one).
     *
     * @throws VerbsException if the address is in use or not local
     * @throws IllegalStateException naming the node if it is closed
     */
    public RdmaServer bind(PortAddress address) {
        ensureOpen();
        return servers.bind(address);
    }

    /**
     * Connects to the server at {@code address}.
     *
     * @return the connection once the peer accepted; errors with the connection manager's
     *     {@link VerbsException} (refused, unreachable, rejected, timed out: a {@link io.rdmaflux.verbs.CmException}
     *     with the reason where the provider classifies it), with a {@link ConnectFailedException} when
     *     {@link ConnectionSpec#connectRetry} retries ran out, or
     *     {@link IllegalArgumentException} if {@code spec.rails()} exceeds this node's rails or the spec names a rail
     *     the node does not have ({@link #railNames()}), or
     *     {@link IllegalStateException} naming the node if it is closed (when subscribed)
     */
    public Mono<RdmaConnection> connect(PortAddress address, ConnectionSpec spec) {
        return connectRetries.connect(address, spec.connectRetry(), () -> establishment.connect(address, spec));
    }

    /**
     * Registers application memory with this node's protection domain, for
     * {@link RdmaMessage#of(io.rdmaflux.verbs.MemoryRegion, long, int)}: large messages in it go by the
     * rendezvous with no staging copy (RDMA-written from it, or RDMA-read from it by the receiver, so the
     * region allows {@code LOCAL_WRITE | REMOTE_READ}). The region is also entered in the node's
     * registration cache, so {@link RdmaMessage#of(java.nio.ByteBuffer)} messages of slices of the same
     * buffer hit it. Register once and reuse (registration pins memory and costs far more than a copy of
     * one message). Deregistering the region invalidates it at once (no new send uses it, and
     * {@code isValid()} is false) and drops the registration as soon as no send in flight uses it. The
     * node's close deregisters it too.
     *
     * @param buffer a direct buffer; the region covers {@code [position, limit)}
     * @throws IllegalArgumentException if the buffer is not direct
     * @throws IllegalStateException if the node is closed
     */
    public io.rdmaflux.verbs.MemoryRegion registerMemory(java.nio.ByteBuffer buffer) {
        ensureOpen();
        return registrationCache.registerUser(buffer, Access.LOCAL_WRITE | Access.REMOTE_READ);
    }

    /**
     * Drops the registration cache's registrations of {@code buffer}'s memory and its reference to the
     * buffer: call it before freeing direct memory by hand (the cache otherwise keeps a buffer it
     * registered reachable, so that its memory cannot be freed and reused at the same address while a
     * stale registration maps it). A registration a send in flight uses is dropped when that send
     * completes. Regions from {@link #registerMemory} are not touched (deregister those).
     *
     * @param buffer the direct buffer whose messages were sent ({@code [0, capacity)} of it counts)
     * @return registrations dropped
     * @throws IllegalArgumentException if the buffer is not direct
     */
    public int invalidateRegistrations(java.nio.ByteBuffer buffer) {
        return registrationCache.invalidate(buffer);
    }

    /** The registration cache's counters now (hits, misses, evictions, bytes registered; any thread). */
    public RegistrationCacheStats registrationCacheStats() {
        return RegistrationCacheStats.of(registrationCache.counters());
    }

    RegistrationCache registrationCache() {
        return registrationCache;
    }

    /** The node's protection domain: one-sided exposures register in it. */
    ProtectionDomain protectionDomain() {
        return pd;
    }

    /** Whether {@code region} is registered in this node's protection domain. */
    boolean owns(io.rdmaflux.verbs.MemoryRegion region) {
        return region.protectionDomain() == pd && region.isValid();
    }

    /**
     * Whether this node's RC connections (and those of a kind that takes its buffers from the node's pools, as
     * reliable UD does) draw their receive buffers from one shared receive queue per rail
     * and their send buffers from one shared region per rail ({@link Builder#sharedReceiveQueue(int)} on a
     * device with SRQs), rather than from pools of their own.
     */
    public boolean usesSharedReceiveQueue() {
        return shared.buffers() != null;
    }

    /** Registered bytes of the node's shared receive and send pools so far (0 without them). */
    public long sharedRegisteredBytes() {
        return shared.registeredBytes();
    }

    /** The first device's shared CQ, or null. */
    @Nullable SharedCompletionQueue sharedCompletionQueue() {
        return sharedCompletionQueue(0);
    }

    /** Device {@code device}'s shared CQ (index into {@link #deviceNames()}), or null. */
    @Nullable SharedCompletionQueue sharedCompletionQueue(int device) {
        return shared.completionQueue(device);
    }

    @Nullable NodeSharedBuffers sharedBuffers() {
        return shared.buffers();
    }

    /** Registered message buffers for rendezvous (0: rendezvous off, large messages are fragmented). */
    int rendezvousBuffers() {
        return settings.rendezvousBuffers;
    }

    /**
     * Time without a frame from the peer, while a send waits for credit, before a connection probes its
     * rails ({@link CreditProbe}): the queue pairs' transport retry timeout, ns.
     */
    long creditProbeIntervalNs() {
        return settings.qpTimeouts.retryTimeoutNs();
    }

    /** Messages longer than this many bytes are sent by rendezvous. */
    int rendezvousThresholdBytes() {
        return settings.rendezvousThresholdBytes;
    }

    /** The node's rendezvous receive ({@code receive} true) or send pool ({@link NodeRendezvousPools}). */
    MessageBufferPool rendezvousPool(boolean receive) {
        return rendezvousPools.get(receive);
    }

    DefaultRdmaConnection register(List<Channel> subchannels, ChannelFactory factory, int peerMaxMessageBytes,
                                           boolean peerRendezvous, RendezvousMode rendezvousMode, RailDevices devices,
                                           String description) {
        Channel[] scs = subchannels.toArray(new Channel[0]);
        DefaultRdmaConnection c = new DefaultRdmaConnection(this, name + "/conn" + connections.nextId() + " (" + description + ")",
            scs, factory.create(List.of(scs)), peerMaxMessageBytes, settings.maxMessageBytes, settings.sendQueue,
            settings.reorderWindow(scs.length), settings.creditThreshold, peerRendezvous, rendezvousMode, devices);
        connections.opened(c);
        return c;
    }

    /**
     * The node's connections not yet freed (open, closing, or closed with received messages still held), in
     * no particular order; a new list per call. Any thread.
     */
    public List<RdmaConnection> connections() {
        return List.copyOf(connections.snapshot());
    }

    /**
     * Registers {@code listener} for the connections opened and freed from now on; it is not told about the
     * connections open now (read {@link #connections()} after registering, and expect
     * {@link ConnectionListener#connectionFreed} for those too). Any thread.
     *
     * @return disposing it unregisters the listener
     */
    public reactor.core.Disposable addConnectionListener(ConnectionListener listener) {
        return connections.addListener(listener);
    }

    void onConnectionTerminated(DefaultRdmaConnection c) {
        // the rails stay until no receive buffer is held (see onConnectionRailsFreed)
    }

    /** The connection's QPs, CQs and rail buffers are freed: nothing is left for the progress thread to do. */
    void onConnectionRailsFreed(DefaultRdmaConnection c) {
        connections.railsFreed(c);
    }

    /** The connection is freed and every message it delivered released: metrics and close forget it. Any thread. */
    void onConnectionFreed(DefaultRdmaConnection c) {
        connections.freed(c);
    }

    /**
     * A snapshot for leak checks: open connections and buffers held by the application.
     */
    public NodeMetrics metrics() {
        return connections.metrics();
    }

    /**
     * Counters of a node.
     *
     * @param connections        connections not yet freed (a closed one is freed once its messages are released)
     * @param buffersOutstanding received messages not yet released, over all connections
     */
    public record NodeMetrics(int connections, int buffersOutstanding) {
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("node " + name + " is closed; build a new RdmaNode to bind, connect or register memory");
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * Aborts every connection, stops listening, frees every buffer, closes the protection domain
     * and stops the node's thread. Idempotent. Call it from outside the progress thread: on it (from a
     * signal or callback of the node's connections) it throws {@link IllegalStateException} and closes
     * nothing. It frees
     * nothing while the progress thread is still inside the node's duty cycle: a callback blocking on
     * that thread holds close up for as long as it blocks, with a warning every 5 s. Of concurrent
     * calls, one frees the node and the others return at once. Received
     * messages the application still holds are freed too and reported, one
     * {@link RdmaLeakReporter.Leak} per connection, to the {@linkplain RdmaLeakReporter#installed()
     * installed} {@link RdmaLeakReporter} on this thread once everything is freed. Every leak is
     * reported even if the reporter throws; close then throws the first throwable (a
     * {@link RuntimeException} or {@link Error} as it is), with later ones suppressed in it.
     */
    @Override
    public void close() {
        if (engine.isProgressThread() && !closed) {
            // freeing here would pull the connections, pools and protection domain from under the duty cycle
            // this call came from, which goes on with them once the callback returns
            throw new IllegalStateException("close() of node " + name + " was called on its progress thread (from a Reactor signal"
                + " or callback of one of its connections); close it from another thread, e.g."
                + " Mono.fromRunnable(node::close).subscribeOn(Schedulers.boundedElastic()).subscribe()");
        }
        if (!closeClaimed.compareAndSet(false, true)) {
            // another call closes (or closed) the node: only that one frees, once the progress thread is out
            return;
        }
        closed = true;
        connectRetries.close();
        servers.close();
        PeerAbortNotice.abortAndLinger(engine, connections.snapshot());
        engine.close();
        List<RdmaLeakReporter.Leak> leaks = connections.forceCloseAll();
        rendezvousPools.close();
        shared.close();
        // every connection is freed: no RDMA operation reads cached memory any more
        registrationCache.close();
        rails.close();
        LeakReporters.report(leaks);
    }

    @Override
    public String toString() {
        return "RdmaNode{" + name + ", " + provider.name() + ", rails=" + rails + ", " + engine.mode() + "}";
    }

    /**
     * Builds an {@link RdmaNode}. Sizes are validated here with messages naming the value.
     *
     * <p>Defaults: first device, port 1, 8 KiB buffers, 64 receive + 8 control + 64 send buffers
     * per rail, a send queue of 16, 1 MiB maximum message, DEDICATED threading, the system clock.
     */
    public static final class Builder {
        // package-private: NodeSettings reads them at build()
        @Nullable RdmaProvider provider;
        @Nullable String device;
        @Nullable String name;
        int[] ports = {1};
        boolean portsGiven;
        /** Null: {@link #device} and {@link #ports} make the rails. */
        @Nullable List<RailSpec> railSpecs;
        int bufferBytes = 8192;
        int receiveBuffers = 64;
        int controlBuffers = 8;
        int sendBuffers = 64;
        int sendQueue = 16;
        /** 0: the default, {@link RdmaNode#DEFAULT_MESSAGE_CREDITS_PER_BUFFER}. */
        int messageCreditsPerBuffer;
        int creditThreshold;
        int maxMessageBytes = 1 << 20;
        int rendezvousBuffers = 4;
        int rendezvousThresholdBytes = -1;
        long registrationCacheBytes = DEFAULT_REGISTRATION_CACHE_BYTES;
        ThreadingMode threadingMode = ThreadingMode.DEDICATED;
        NanoClock clock = SystemNanoClock.INSTANCE;
        /** Null: each node built gets its own {@link ProgressIdleStrategy#backoff()} (idle strategies keep per-thread state). */
        @Nullable IdleStrategy idleStrategy;
        @Nullable Boolean driveProvider;
        ChannelFactory acceptChannelFactory = ChannelFactory.roundRobin();
        long qpRetryTimeoutNs = QpTimeouts.DEFAULTS.retryTimeoutNs();
        int qpRetryCount = QpTimeouts.DEFAULTS.retryCount();
        long qpRnrTimeoutNs = QpTimeouts.DEFAULTS.rnrTimeoutNs();
        int qpRnrRetryCount = QpTimeouts.DEFAULTS.rnrRetryCount();
        final java.util.Map<ChannelKind, ChannelProvider> channelProviders =
            new java.util.EnumMap<>(java.util.Map.of(ChannelKind.RC_SEND_RECV, ChannelProvider.rcSendRecv()));
        boolean discoverChannelProviders = true;
        EagerSpec eager = EagerSpec.DEFAULTS;
        int eagerPollingSet = 64;
        int sharedReceiveBuffers;
        int sharedSendBuffers = 256;
        int sharedCreditWindow = 8;
        int sharedCqQueuePairs;

        private Builder() {
        }

        /**
         * Offers the channels of {@code provider}'s kind to connections of this node: to rails whose
         * {@code ConnectionSpec} asks for it, and to peers whose handshake asks for it. The RC send/receive
         * channel is always offered; a provider of the same kind replaces the one before.
         */
        public Builder channelProvider(ChannelProvider provider) {
            channelProviders.put(Objects.requireNonNull(provider.kind(), "provider.kind()"), provider);
            return this;
        }

        /**
         * Whether {@link #build()} also offers the {@link ChannelProvider}s found by {@link java.util.ServiceLoader}
         * (default true; the {@code rdma-eager} module registers the eager kind this way). A provider given to
         * {@link #channelProvider} wins over a discovered one of the same kind.
         */
        public Builder discoverChannelProviders(boolean discover) {
            this.discoverChannelProviders = discover;
            return this;
        }

        /**
         * The eager RDMA ring settings of this node's connections (seed 001 &sect;4): the ring it registers for
         * every rail it accepts, and the default of its connects ({@link ConnectionSpec#eager} overrides). Used
         * where the node offers {@link ChannelKind#EAGER_RDMA}. Default {@link EagerSpec#DEFAULTS}.
         */
        public Builder eager(EagerSpec spec) {
            this.eager = Objects.requireNonNull(spec, "spec");
            return this;
        }

        /**
         * The most peers (rails of connections) whose eager rings this node polls at once, in [0, 65536]
         * (default 64): the receiver promotes a busy peer into the set and demotes an idle one, whose sender
         * then uses send/receive (seed 001 &sect;4.6). 0 polls no ring: every message uses send/receive.
         */
        public Builder eagerPollingSet(int peers) {
            this.eagerPollingSet = range("eagerPollingSet", peers, 0, 65536,
                "the polling set holds the peers whose rings are polled; 0 turns eager off for this node's receive side");
            return this;
        }

        public Builder provider(RdmaProvider provider) {
            this.provider = Objects.requireNonNull(provider, "provider");
            return this;
        }

        /** The device by name (default: the provider's first device). */
        public Builder device(String deviceName) {
            this.device = Objects.requireNonNull(deviceName, "deviceName");
            return this;
        }

        /** A name for logs and the thread name. */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** The port numbers (1-based) of {@link #device} used as rails, in rail order. */
        public Builder ports(int... portNumbers) {
            if (portNumbers.length == 0) {
                throw new IllegalArgumentException("at least one port is required; e.g. ports(1)");
            }
            this.ports = portNumbers.clone();
            this.portsGiven = true;
            return this;
        }

        /**
         * The rails, in rail order, from one or more devices (HCAs) of the provider: each entry a port of a
         * device and its paths (queue pairs per connection, seed 000 &sect;4.2), e.g.
         * {@code rails(RailSpec.of("soft0", 1), RailSpec.of("soft1", 1))}. Instead of {@link #device} and
         * {@link #ports}, which it cannot be combined with.
         *
         * @throws IllegalArgumentException if empty (at build: if a port is given twice, or device/ports were given too)
         */
        public Builder rails(RailSpec... rails) {
            return rails(List.of(rails));
        }

        /** {@link #rails(RailSpec...)} from a list. */
        public Builder rails(List<RailSpec> rails) {
            if (rails.isEmpty()) {
                throw new IllegalArgumentException("at least one rail is required; e.g. rails(RailSpec.of(\"soft0\", 1))");
            }
            this.railSpecs = List.copyOf(rails);
            return this;
        }

        /**
         * {@link #rails(RailSpec...)} from text, {@code device:port[:paths]} entries separated by commas, e.g.
         * {@code "mlx5_0:1,mlx5_1:1"} or {@code "soft0:1:2"}.
         *
         * @throws IllegalArgumentException naming the bad entry and the expected form
         */
        public Builder rails(String rails) {
            return rails(RailSpec.parseList(rails));
        }

        /**
         * Many peers (seed 003 &sect;2.1): RC connections of this node draw their receive buffers from one
         * shared receive queue per rail holding {@code buffers} receive buffers of {@link #bufferBytes}, and
         * their send buffers from one shared region per rail ({@link #sharedSendBuffers}), instead of
         * registering {@code receiveBuffers + controlBuffers + sendBuffers} buffers each; a connection then
         * costs no registered memory of its own. Buffer credits are lent to each connection by its
         * subscriber's demand, at most an equal share of the pool among the connections that want or hold
         * buffers (the fairness rule of {@code SrqCreditBudget}); {@code max(controlBuffers, buffers / 16)}
         * of them are kept for control frames. A device without SRQs
         * ({@code DeviceCapabilities.sharedReceiveQueue()} false) falls back to per-connection pools
         * ({@link RdmaNode#usesSharedReceiveQueue()} says which). 0 (the default) is off.
         *
         * @param buffers receive buffers per rail, 0 (off) or more than the control reserve
         * @throws IllegalArgumentException if negative (at build if not above the control reserve)
         */
        public Builder sharedReceiveQueue(int buffers) {
            this.sharedReceiveBuffers = range("sharedReceiveQueue buffers", buffers, 0, 1 << 20, "use 0 (off) or e.g. 4096");
            return this;
        }

        /**
         * One completion queue per device, shared by the RC queue pairs of every connection and rail of
         * this node on that device and polled in turn by the progress engine, completions dispatched by queue
         * pair number (seed 000 &sect;5.1), instead of one CQ per connection and rail. Each device's CQ holds
         * {@code maxQueuePairs} times what one queue pair can have outstanding, so it cannot overrun; a
         * connection that would exceed {@code maxQueuePairs} on a device (one per rail on it) fails to open with
         * an error naming this option. 0 (the default) is off.
         *
         * @throws IllegalArgumentException if negative, or (at build) if the CQ would exceed the device's largest
         */
        public Builder sharedCompletionQueue(int maxQueuePairs) {
            this.sharedCqQueuePairs = range("sharedCompletionQueue queue pairs", maxQueuePairs, 0, 1 << 20, "use 0 (off) or e.g. 1024");
            return this;
        }

        /**
         * With {@link #sharedReceiveQueue(int)}: the most buffer credits a connection's peer holds unused
         * (default 8). A credit cannot be taken back until the peer uses it, so idle peers keep theirs:
         * with N connections at most {@code N x credits} buffers sit idle, and a connection that starts
         * talking finds buffers while the pool's DATA buffers exceed that. Larger windows let a single
         * busy peer stream faster; smaller ones let more peers share a pool.
         *
         * @throws IllegalArgumentException if below 1
         */
        public Builder sharedCreditWindow(int credits) {
            this.sharedCreditWindow = range("sharedCreditWindow", credits, 1, 1 << 16, "use at least 1, e.g. 8");
            return this;
        }

        /**
         * Send buffers per rail of the shared send region ({@link #sharedReceiveQueue(int)} on); each
         * connection still uses at most {@link #sendBuffers} of them at once. Default 256.
         *
         * @throws IllegalArgumentException if below 2
         */
        public Builder sharedSendBuffers(int buffers) {
            this.sharedSendBuffers = range("sharedSendBuffers", buffers, 2, 1 << 20, "use at least 2, e.g. 256");
            return this;
        }

        /** Size of every send and receive buffer in bytes, frame header (24 bytes) included; in [64, 16 MiB]. */
        public Builder bufferBytes(int bytes) {
            this.bufferBytes = range("bufferBytes", bytes, 64, 16 << 20, "a buffer holds the 24-byte frame header and the payload of one frame");
            return this;
        }

        /** DATA receive buffers per rail of a connection: the most credits a peer holds; in [1, 65536]. */
        public Builder receiveBuffers(int n) {
            this.receiveBuffers = range("receiveBuffers", n, 1, 65536, "give each rail at least one receive buffer (the most credits the peer holds)");
            return this;
        }

        /** Extra receive buffers per rail for CREDIT/CLOSE frames; in [1, 1024]. */
        public Builder controlBuffers(int n) {
            this.controlBuffers = range("controlBuffers", n, 1, 1024, "keep at least one receive buffer for CREDIT and CLOSE frames");
            return this;
        }

        /** Send buffers per rail of a connection (one stays for control frames); in [2, 65536]. */
        public Builder sendBuffers(int n) {
            this.sendBuffers = range("sendBuffers", n, 2, 65536, "one send buffer stays for control frames, so at least 2");
            return this;
        }

        /** Messages taken from a send publisher beyond the credits held; in [1, 65536]. */
        public Builder sendQueue(int n) {
            this.sendQueue = range("sendQueue", n, 1, 65536, "the sender takes at least one message ahead of its credits");
            return this;
        }

        /**
         * Message credits this node grants a peer per free DATA receive buffer, in [1, 64]. Default:
         * {@value RdmaNode#DEFAULT_MESSAGE_CREDITS_PER_BUFFER}, on every kind of rail. Small messages travel
         * packed, up to 64 to a buffer; with 1 credit per buffer a streaming sender of small messages has at
         * most {@code receiveBuffers} of them in flight and stalls on every CREDIT frame: between two DEDICATED
         * nodes each CREDIT frame is then a hand-off between threads, and 32 B streams ran at 0.7&times; the
         * rate of 8 per buffer (issue 19; README "DEDICATED vs SHARED"). On an eager rail the ring holds
         * {@code EagerSpec.slots} frames (16 by default): with 8 credits per buffer more packed frames are in
         * flight than that and the rest overflow to send/receive; the receiver reports the ring frames posted
         * before each send/receive frame first, so the rail's frames still reach the connection in order and
         * take its in-order path.
         *
         * <p><b>What stays bounded whatever the value.</b> Frames stay bounded by the free buffers (a message
         * that fills a buffer needs one of its own), so the receiver's memory is its receive buffers. The
         * sender takes from its publisher no more than its message credits, the peer's receive buffers and
         * the send queue allow, and no more than its <em>buffer</em> credits times the messages per buffer
         * its latest message would pack ({@code SendPipeline#requestMore}): messages that each fill a
         * buffer are taken as with 1 credit per buffer, however many credits small messages earned before
         * them. What grows with {@code n}: the messages a stalled subscriber can hold unreleased (up to
         * {@code n} per buffer, packed), and the receiver's reorder window, {@code rails * (n *
         * receiveBuffers + 1) + rendezvousBuffers + 1} PSNs, whose ring starts at 64 slots and grows only
         * while messages arrive that far out of order.
         */
        public Builder messageCreditsPerBuffer(int n) {
            this.messageCreditsPerBuffer = range("messageCreditsPerBuffer", n, 1, 64,
                "a packed frame carries at most 64 messages, so more credits per buffer only grow the reorder window");
            return this;
        }

        /**
         * Pending credits that trigger an explicit CREDIT frame when no reverse traffic carries them
         * (default receiveBuffers / 4); in [1, receiveBuffers], the upper bound checked by {@link #build()}.
         */
        public Builder creditThreshold(int n) {
            this.creditThreshold = range("creditThreshold", n, 1, 65536, "a CREDIT frame carries at least one credit; at most receiveBuffers");
            return this;
        }

        /** The largest message this node sends or receives; larger ones are fragmented up to it. */
        public Builder maxMessageBytes(int bytes) {
            this.maxMessageBytes = range("maxMessageBytes", bytes, 0, Integer.MAX_VALUE - 64, "a message is a Java array or buffer, below 2 GiB");
            return this;
        }

        /**
         * Registered whole-message buffers per node and direction for the zero-copy rendezvous
         * (default 4; 0 turns rendezvous off and large messages travel as DATA fragments). Each is
         * {@code maxMessageBytes} long and registered once, on first use: the node pins at most
         * {@code 2 * n * maxMessageBytes} bytes for large messages, and a consumer holding {@code n}
         * large messages makes further ones wait at the sender (RTS sent, no CTS yet). In [0, 64].
         */
        public Builder rendezvousBuffers(int n) {
            this.rendezvousBuffers = range("rendezvousBuffers", n, 0, MessageBufferPool.MAX_SLOTS, "0 turns rendezvous off");
            return this;
        }

        /**
         * Messages longer than this many bytes go by rendezvous (RTS, CTS, RDMA WRITE into a registered
         * message buffer, FIN) instead of as DATA fragments. Default: the payload of one receive buffer
         * ({@code bufferBytes - 24}), so every message that would need more than one frame. In [0, 2^31 - 1].
         */
        public Builder rendezvousThresholdBytes(int bytes) {
            this.rendezvousThresholdBytes = range("rendezvousThresholdBytes", bytes, 0, Integer.MAX_VALUE, "a length in bytes");
            return this;
        }

        /**
         * Most bytes of application memory the node's registration cache keeps registered (default
         * {@value RdmaNode#DEFAULT_REGISTRATION_CACHE_BYTES}, 64 MiB). Messages of direct
         * {@link java.nio.ByteBuffer}s above the rendezvous threshold are sent by reference: their buffer
         * is registered on first use and kept registered for the next sends from it (the pin-down cache,
         * seed 001 &sect;3.1), the least recently used registration dropped when a new one would exceed
         * the budget; a registration a send in flight uses is never dropped (the new send waits for it).
         * A message longer than the budget, and every message when the budget is 0, is copied into a
         * staging buffer instead. The cache keeps each buffer it registered reachable until it drops the
         * registration ({@link RdmaNode#invalidateRegistrations} drops it on request).
         *
         * @param bytes in [0, 2^62]; 0 turns the cache off
         */
        public Builder registrationCacheBytes(long bytes) {
            if (bytes < 0 || bytes > 1L << 62) {
                throw new IllegalArgumentException("registrationCacheBytes in [0, 2^62] required but it was " + bytes
                    + "; 0 turns the registration cache off (large direct-buffer messages are then copied into a staging buffer)");
            }
            this.registrationCacheBytes = bytes;
            return this;
        }

        public Builder threadingMode(ThreadingMode mode) {
            this.threadingMode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** The clock protocol time is read from (a {@code VirtualClock} for virtual-time tests). */
        public Builder clock(NanoClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * How the DEDICATED thread idles when there is no work (default: {@link ProgressIdleStrategy#backoff()}).
         *
         * <p>A {@link ProgressIdleStrategy} ({@code backoff()}, or {@code lowLatency()} for
         * request/response traffic) serves as a template: each node built gets a fresh copy, which
         * blocks in the provider's I/O wait when the node drives an INVOKER-mode provider (on the IP
         * fabric: a frame arriving on a socket, or work handed in by another thread, ends the block at
         * once). Any other Agrona strategy (e.g. {@code BusySpinIdleStrategy} to trade a core for the
         * lowest latency) is used as it is and only parks: it keeps the state of the one thread that
         * idles with it, so build only one node from a builder given one.
         */
        public Builder idleStrategy(IdleStrategy idleStrategy) {
            this.idleStrategy = Objects.requireNonNull(idleStrategy, "idleStrategy");
            return this;
        }

        /** Whether the node calls {@code provider.progress} in its duty cycle (default: when the provider is INVOKER). */
        public Builder driveProvider(boolean drive) {
            this.driveProvider = drive;
            return this;
        }

        /** The scheduling policy of connections this node accepts (default round robin). */
        public Builder acceptChannelFactory(ChannelFactory factory) {
            this.acceptChannelFactory = Objects.requireNonNull(factory, "factory");
            return this;
        }

        /**
         * Transport timeout per retry of every subchannel's RC QP, in ns of the node's clock
         * (default 200 ms). A peer or path silent for about {@code (qpRetryCount + 1) * timeout}
         * fails the subchannel with RETRY_EXC_ERR. Keep it well above the longest stall a progress
         * thread may see (descheduling on a loaded host); virtual-time tests may use 1 ms.
         *
         * @param ns in [1 µs, 60 s]
         */
        public Builder qpRetryTimeoutNs(long ns) {
            if (ns < 1_000 || ns > 60_000_000_000L) {
                throw new IllegalArgumentException("qpRetryTimeoutNs in [1000, 60000000000] ns required but it was " + ns);
            }
            this.qpRetryTimeoutNs = ns;
            return this;
        }

        /** Transport retries before a subchannel fails (default 7); in [0, 7]. */
        public Builder qpRetryCount(int n) {
            this.qpRetryCount = range("qpRetryCount", n, 0, 7, "verbs allows 0..7 transport retries");
            return this;
        }

        /** Delay before re-sending after a receiver-not-ready NAK, ns (default 100 µs); in [1 µs, 1 s]. */
        public Builder qpRnrTimeoutNs(long ns) {
            if (ns < 1_000 || ns > 1_000_000_000L) {
                throw new IllegalArgumentException("qpRnrTimeoutNs in [1000, 1000000000] ns required but it was " + ns);
            }
            this.qpRnrTimeoutNs = ns;
            return this;
        }

        /** RNR retries before a subchannel fails (default 7 = forever, as in verbs); in [0, 7]. */
        public Builder qpRnrRetryCount(int n) {
            this.qpRnrRetryCount = range("qpRnrRetryCount", n, 0, 7, "verbs allows 0..7, 7 meaning retry forever");
            return this;
        }

        /**
         * @throws NullPointerException if no provider was given
         * @throws IllegalArgumentException if sizes do not fit together
         * @throws VerbsException if the device or a port does not exist
         */
        public RdmaNode build() {
            return new RdmaNode(new NodeSettings(this));
        }

        private static int range(String name, int v, int lo, int hi, String fix) {
            if (v < lo || v > hi) {
                throw new IllegalArgumentException(name + " in [" + lo + ", " + hi + "] required but it was " + v + "; " + fix);
            }
            return v;
        }
    }
}
