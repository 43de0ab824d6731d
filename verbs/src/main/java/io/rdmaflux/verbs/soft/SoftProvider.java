package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.jspecify.annotations.Nullable;

/**
 * The embedded software RDMA provider ({@code soft}): one or more {@link SoftDevice}s (software
 * NICs) on a {@link SoftFabric}.
 *
 * <h2>Two nodes in one JVM</h2>
 * Build two providers on one fabric (each is a host; they connect through its transport and its
 * connection-manager registry), give both the same {@link io.rdmaflux.verbs.VirtualClock} and
 * {@link ThreadingMode#INVOKER}, and drive both with {@link #progress(long)}:
 * <pre>{@code
 * VirtualClock clock = new VirtualClock();
 * SoftFabric fabric = SoftFabric.mem("test");
 * SoftProvider a = SoftProvider.builder().name("a").fabric(fabric).clock(clock).threadingMode(ThreadingMode.INVOKER).build();
 * SoftProvider b = SoftProvider.builder().name("b").fabric(fabric).clock(clock).threadingMode(ThreadingMode.INVOKER).build();
 * }</pre>
 * (One provider with two devices also works: its devices are two NICs on the same fabric.)
 *
 * <h2>Threading</h2>
 * {@link ThreadingMode#DEDICATED} (default) runs every device's engine on one thread named
 * {@code rdmaflux-soft-<name>} (or each device's on its own, {@link Builder#threadPerDevice(boolean)}), started by
 * {@link Builder#build()} and stopped by {@link #close()};
 * it idles with an Agrona {@link BackoffIdleStrategy}. {@link ThreadingMode#INVOKER} starts no
 * thread: the caller drives {@link #progress(long)}, one thread at a time.
 * {@link ThreadingMode#SHARED} is not offered (rejected with a clear error).
 *
 * <h2>Accounting</h2>
 * {@link #liveMemoryRegions()} and {@link #allocatedBytes()} per provider, {@link SoftResources} for
 * the whole JVM; both fall to 0 when everything is closed.
 *
 * <p><b>Concurrency:</b> thread-safe; {@link #close()} is idempotent.
 */
public final class SoftProvider implements RdmaProvider {
    /** The provider name used with {@code RdmaProviders.open}. */
    public static final String NAME = "soft";

    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final String instanceName;
    private final SoftFabric fabric;
    private final NanoClock clock;
    private final ThreadingMode threadingMode;
    private final List<Device> devices;
    private final SoftDevice[] deviceArray;
    private final ConnectionManager connectionManager;
    private final @Nullable ProgressAgent connectionManagerAgent;
    /** The DEDICATED engine threads: one for every device, or one per device ({@link Builder#threadPerDevice}); empty in INVOKER mode. */
    private final AgentRunner[] runners;
    private volatile @Nullable Throwable lastError;
    final AtomicInteger liveRegions = new AtomicInteger();
    final AtomicLong allocatedBytes = new AtomicLong();
    private volatile boolean closed;
    private final boolean threadDomain;
    private final String providerName;
    private final DeviceCapabilities capabilities;
    private final long minRetryTimeoutNs;

    private SoftProvider(Builder b) {
        this.providerName = b.providerName;
        this.capabilities = b.capabilities;
        this.minRetryTimeoutNs = b.minRetryTimeoutNs;
        this.threadDomain = b.threadDomain;
        this.instanceName = b.name != null ? b.name : "soft" + INSTANCES.getAndIncrement();
        this.fabric = b.fabric != null ? b.fabric : SoftFabric.shared(SoftFabric.DEFAULT_NAME);
        this.clock = b.clock;
        this.threadingMode = b.threadingMode;
        List<Device> list = new ArrayList<>();
        try {
            for (int i = 0; i < b.devices; i++) {
                String deviceName = i < b.deviceNames.size() ? b.deviceNames.get(i) : fabric.nextDeviceName();
                list.add(new SoftDevice(this, deviceName, b.portsPerDevice, b::railOf, fabric));
            }
        } catch (RuntimeException e) {
            list.forEach(Device::close);
            throw e;
        }
        this.devices = List.copyOf(list);
        this.deviceArray = list.toArray(new SoftDevice[0]);
        if (b.connectionManagerFactory != null) {
            this.connectionManager = Objects.requireNonNull(b.connectionManagerFactory.apply(this), "connection manager");
            this.connectionManagerAgent = connectionManager instanceof ProgressAgent agent ? agent : null;
        } else {
            SoftConnectionManager cm = new SoftConnectionManager(this, fabric);
            this.connectionManager = cm;
            this.connectionManagerAgent = new ProgressAgent() {
                @Override
                public int doWork(long nowNs) {
                    return cm.doWork(nowNs);
                }

                @Override
                public String roleName() {
                    return "soft-cm-" + instanceName;
                }
            };
        }
        SoftResources.LIVE_PROVIDERS.incrementAndGet();
        if (threadingMode == ThreadingMode.DEDICATED && b.threadPerDevice && deviceArray.length > 1) {
            // seed 004 section II-C / III-D: each NIC's chunk submission (its copies and socket writes) on a core of
            // its own; the connection manager rides with device 0
            this.runners = new AgentRunner[deviceArray.length];
            for (int i = 0; i < deviceArray.length; i++) {
                runners[i] = new AgentRunner(b.idleStrategyFactory.get(), t -> lastError = t, null, new DeviceAgent(i));
            }
            for (AgentRunner r : runners) {
                AgentRunner.startOnThread(r);
            }
        } else if (threadingMode == ThreadingMode.DEDICATED) {
            this.runners = new AgentRunner[] {new AgentRunner(b.idleStrategyFactory.get(), t -> lastError = t, null, new EngineAgent())};
            AgentRunner.startOnThread(runners[0]);
        } else {
            this.runners = new AgentRunner[0];
        }
    }

    /** A builder; defaults: one device with one unshaped port, DEDICATED, system clock, the shared default fabric. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return providerName;
    }

    /** The floor under every QP's transport timeout, ns (0: none). */
    public long minRetryTimeoutNs() {
        return minRetryTimeoutNs;
    }

    /** What every device of this provider supports ({@link SoftDevice#CAPABILITIES} unless the builder narrowed it). */
    public DeviceCapabilities capabilities() {
        return capabilities;
    }

    /** This instance's name (thread name suffix, messages). */
    public String instanceName() {
        return instanceName;
    }

    /** The fabric this provider's devices are attached to. */
    public SoftFabric fabric() {
        return fabric;
    }

    /** The clock all of this provider's timing uses. */
    public NanoClock clock() {
        return clock;
    }

    @Override
    public List<Device> devices() {
        return devices;
    }

    /** Device {@code index} (0-based) as a {@link SoftDevice}. */
    public SoftDevice softDevice(int index) {
        if (index < 0 || index >= deviceArray.length) {
            throw new VerbsException("device index " + index + " outside [0, " + deviceArray.length + ")");
        }
        return deviceArray[index];
    }

    @Override
    public ConnectionManager connectionManager() {
        return connectionManager;
    }

    @Override
    public ThreadingMode threadingMode() {
        return threadingMode;
    }

    /**
     * Runs every device's engine once ({@link ThreadingMode#INVOKER} only).
     *
     * @param nowNs current time in ns of {@link #clock()}
     * @return work done; 0 when idle
     * @throws VerbsException in DEDICATED mode (the provider's thread progresses it), or after close
     */
    @Override
    public int progress(long nowNs) {
        if (threadingMode != ThreadingMode.INVOKER) {
            throw new VerbsException("provider '" + instanceName + "' runs in " + threadingMode
                + " mode on its own thread; progress(nowNs) is for INVOKER mode (build with threadingMode(INVOKER))");
        }
        if (closed) {
            throw new VerbsException("provider '" + instanceName + "' is closed");
        }
        return doWork(nowNs);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The soft provider: each device's QPs whose doorbells rang transmit their posted work requests and the
     * frames are written to the transport (the first step of a pass). Returns 0 unless in INVOKER mode: a
     * provider with its own thread transmits on it. Call it from the thread that drives {@link #progress}.
     */
    @Override
    public int transmitPosted(long nowNs) {
        if (threadingMode != ThreadingMode.INVOKER || closed) {
            return 0;
        }
        int work = 0;
        for (SoftDevice d : deviceArray) {
            work += d.transmitPosted(nowNs);
        }
        return work;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The soft provider waits when it runs in INVOKER mode with one device whose transport can
     * wait (the IP fabric: its {@code Selector}, with a timeout of whole milliseconds, so a
     * {@code timeoutNs} under 1 ms, or a frame held for a rail's latency that is due sooner, returns
     * false); on the in-JVM fabric it parks until another NIC pushes frames to this one (that thread
     * unparks it) or {@code timeoutNs} passes. The connection manager's own sockets do not end a wait:
     * a connection being set up advances at least once per {@code timeoutNs}.
     */
    @Override
    public boolean awaitWork(long timeoutNs) {
        if (threadingMode != ThreadingMode.INVOKER || closed || deviceArray.length != 1) {
            return false;
        }
        return deviceArray[0].awaitWork(clock.nanoTime(), timeoutNs);
    }

    @Override
    public void wakeup() {
        for (SoftDevice d : deviceArray) {
            d.wakeup();
        }
    }

    private int doWork(long nowNs) {
        int work = 0;
        for (SoftDevice d : deviceArray) {
            work += d.doWork(nowNs);
        }
        ProgressAgent cm = connectionManagerAgent;
        return cm == null ? work : work + cm.doWork(nowNs);
    }

    /** Whether posting skips its lock (see {@link Builder#threadDomain(boolean)}). */
    public boolean threadDomain() {
        return threadDomain;
    }

    /** Memory regions of this provider registered and not deregistered. */
    public int liveMemoryRegions() {
        return liveRegions.get();
    }

    /** Bytes allocated by this provider's {@code allocateMemory} and not yet deregistered. */
    public long allocatedBytes() {
        return allocatedBytes.get();
    }

    /** The last error the DEDICATED thread caught (the engine does not throw by design), or null. */
    public @Nullable Throwable lastError() {
        return lastError;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (AgentRunner r : runners) {
            r.close();
        }
        connectionManager.close();
        for (SoftDevice d : deviceArray) {
            d.close();
        }
        SoftResources.LIVE_PROVIDERS.decrementAndGet();
    }

    @Override
    public String toString() {
        return "SoftProvider{" + instanceName + ", " + threadingMode + ", fabric=" + fabric.name() + ", devices="
            + devices.stream().map(Device::name).toList() + "}";
    }

    /** The engine of one device and, on device 0, the connection manager: one thread per device. */
    private final class DeviceAgent implements Agent {
        private final int index;

        DeviceAgent(int index) {
            this.index = index;
        }

        @Override
        public int doWork() {
            long nowNs = clock.nanoTime();
            int work = deviceArray[index].doWork(nowNs);
            ProgressAgent cm = connectionManagerAgent;
            return index != 0 || cm == null ? work : work + cm.doWork(nowNs);
        }

        @Override
        public String roleName() {
            return "rdmaflux-soft-" + instanceName + "-" + deviceArray[index].name();
        }
    }

    private final class EngineAgent implements Agent {
        @Override
        public int doWork() {
            return SoftProvider.this.doWork(clock.nanoTime());
        }

        @Override
        public String roleName() {
            return "rdmaflux-soft-" + instanceName;
        }
    }

    /** Builder of a {@link SoftProvider}; every value is checked with a message naming it. */
    public static final class Builder {
        private @Nullable String name;
        private @Nullable SoftFabric fabric;
        private NanoClock clock = new SystemNanoClock();
        private ThreadingMode threadingMode = ThreadingMode.DEDICATED;
        private int devices = 1;
        private int portsPerDevice = 1;
        private RailConfig rail = RailConfig.UNSHAPED;
        private final java.util.TreeMap<Integer, RailConfig> portRails = new java.util.TreeMap<>();
        private List<String> deviceNames = List.of();
        private java.util.function.Supplier<IdleStrategy> idleStrategyFactory = () -> new BackoffIdleStrategy(64, 64, 1_000, 200_000);
        private boolean threadPerDevice;
        /** Whether {@link #idleStrategy} gave one instance (which several threads must not share). */
        private boolean oneIdleStrategy;
        private boolean threadDomain;
        private @Nullable Function<SoftProvider, ConnectionManager> connectionManagerFactory;
        private String providerName = NAME;
        private DeviceCapabilities capabilities = SoftDevice.CAPABILITIES;
        private long minRetryTimeoutNs;

        private Builder() {
        }

        /**
         * A floor under every QP's transport timeout ({@code retryTimeoutNs}), in ns; default 0 (none).
         * A hardware NIC rounds its timeout to its own granularity the same way; a transport whose
         * connection setup takes longer than short timeouts (UCX's endpoint wireup over TCP, several ms on
         * a loaded host) sets one so that a live peer is not declared dead.
         *
         * @throws VerbsException if negative
         */
        public Builder minRetryTimeoutNs(long ns) {
            if (ns < 0) {
                throw new VerbsException("minRetryTimeoutNs >= 0 required but it was " + ns);
            }
            this.minRetryTimeoutNs = ns;
            return this;
        }

        /**
         * The name {@link SoftProvider#name()} reports (default {@value SoftProvider#NAME}): a provider
         * that runs the soft NIC over its own {@link FrameTransport} (e.g. {@code ucx}) reports its own name.
         */
        public Builder providerName(String providerName) {
            if (providerName.isBlank()) {
                throw new VerbsException("providerName must not be blank");
            }
            this.providerName = providerName;
            return this;
        }

        /**
         * Narrows what the devices offer (default {@link SoftDevice#CAPABILITIES}): a QP of a type, or
         * an SRQ, that the capabilities say is absent is refused with a {@link VerbsException}. Limits
         * may not exceed the soft NIC's own.
         *
         * @throws VerbsException if a limit exceeds {@link SoftDevice#CAPABILITIES}
         */
        public Builder capabilities(DeviceCapabilities capabilities) {
            DeviceCapabilities max = SoftDevice.CAPABILITIES;
            if (capabilities.maxQueuePairs() > max.maxQueuePairs() || capabilities.maxQpWorkRequests() > max.maxQpWorkRequests()
                || capabilities.maxScatterGather() > max.maxScatterGather() || capabilities.maxCqEntries() > max.maxCqEntries()
                || capabilities.maxMemoryRegionBytes() > max.maxMemoryRegionBytes() || capabilities.maxMessageBytes() > max.maxMessageBytes()
                || capabilities.maxInlineBytes() > max.maxInlineBytes()) {
                throw new VerbsException("capabilities " + capabilities + " exceed the soft NIC's own " + max);
            }
            this.capabilities = Objects.requireNonNull(capabilities, "capabilities");
            return this;
        }

        /** Instance name; the DEDICATED thread is {@code rdmaflux-soft-<name>}. */
        public Builder name(String name) {
            if (name.isBlank()) {
                throw new VerbsException("provider name must not be blank");
            }
            this.name = name;
            return this;
        }

        /** The fabric to attach to (default: {@code SoftFabric.shared("default")}). */
        public Builder fabric(SoftFabric fabric) {
            this.fabric = Objects.requireNonNull(fabric, "fabric");
            return this;
        }

        /** The clock for shaping, latency, timers (default: system nano clock); tests pass a VirtualClock. */
        public Builder clock(NanoClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** DEDICATED (default) or INVOKER. */
        public Builder threadingMode(ThreadingMode mode) {
            if (mode == ThreadingMode.SHARED) {
                throw new VerbsException("the soft provider offers DEDICATED (one thread per provider) or INVOKER "
                    + "(caller drives progress(nowNs)), not SHARED");
            }
            this.threadingMode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** Number of devices (NICs), in [1, 64]. */
        public Builder devices(int count) {
            if (count < 1 || count > 64) {
                throw new VerbsException("devices must be in [1, 64] but it was " + count);
            }
            this.devices = count;
            return this;
        }

        /** Explicit device names (unique on the fabric); devices beyond the list get {@code soft<n>} names. */
        public Builder deviceNames(List<String> names) {
            this.deviceNames = List.copyOf(names);
            if (deviceNames.size() > devices) {
                devices = deviceNames.size();
            }
            return this;
        }

        /** Ports (rails) per device, in [1, 16]. */
        public Builder portsPerDevice(int count) {
            if (count < 1 || count > 16) {
                throw new VerbsException("portsPerDevice must be in [1, 16] but it was " + count);
            }
            this.portsPerDevice = count;
            return this;
        }

        /**
         * The rail model every port starts with, unless {@link #portRail(int, RailConfig)} names the
         * port (each port can be changed later with {@link SoftPort#setRail}).
         */
        public Builder rail(RailConfig rail) {
            this.rail = Objects.requireNonNull(rail, "rail");
            return this;
        }

        /**
         * The rail model port {@code portNumber} (1-based) of every device starts with, instead of
         * {@link #rail(RailConfig)}: e.g. RC faults on one rail only. The number must be within
         * {@link #portsPerDevice(int)}, checked by {@link #build()}.
         */
        public Builder portRail(int portNumber, RailConfig rail) {
            if (portNumber < 1 || portNumber > 16) {
                throw new VerbsException("portNumber must be in [1, 16] but it was " + portNumber);
            }
            portRails.put(portNumber, Objects.requireNonNull(rail, "rail"));
            return this;
        }

        RailConfig railOf(int portNumber) {
            return portRails.getOrDefault(portNumber, rail);
        }

        /**
         * A promise, like verbs' thread domains ({@code ibv_alloc_td}), that each QP, and each SRQ, is
         * posted to by one thread at a time (different QPs may use different threads). The provider
         * then posts without taking the QP's post lock. Breaking the promise corrupts the queues.
         * Default false: posting is thread-safe.
         */
        public Builder threadDomain(boolean singlePosterPerQueue) {
            this.threadDomain = singlePosterPerQueue;
            return this;
        }

        /** Idle strategy of the DEDICATED thread (with {@link #threadPerDevice}, use {@link #idleStrategies}: one each). */
        public Builder idleStrategy(IdleStrategy idleStrategy) {
            Objects.requireNonNull(idleStrategy, "idleStrategy");
            this.idleStrategyFactory = () -> idleStrategy;
            this.oneIdleStrategy = true;
            return this;
        }

        /** The idle strategy of each DEDICATED thread, made once per thread (idle strategies keep state). */
        public Builder idleStrategies(java.util.function.Supplier<IdleStrategy> factory) {
            this.idleStrategyFactory = Objects.requireNonNull(factory, "factory");
            this.oneIdleStrategy = false;
            return this;
        }

        /**
         * DEDICATED mode: one engine thread per device ({@code rdmaflux-soft-<name>-<device>}) instead of one for
         * every device, so the NIC work of rails on different devices &mdash; the copies and, on the IP fabric, the
         * socket writes and reads, which on the soft provider are CPU work &mdash; runs on several cores at once.
         * This is seed 004's offload of chunk submission to idle cores (&sect;II-C, &sect;III-D): it pays only when
         * there are idle cores to take the threads, and costs a hand-off between cores per work request otherwise
         * (measured: README "Offloading NIC work to idle cores"). Default false. With one device it changes nothing.
         *
         * @throws VerbsException in {@link #build()} if the provider is INVOKER (the caller's thread drives it), or if one
         *     idle strategy instance was given ({@link #idleStrategy}) for several devices' threads
         */
        public Builder threadPerDevice(boolean perDevice) {
            this.threadPerDevice = perDevice;
            return this;
        }

        /**
         * Builds the provider's connection manager (default: the in-JVM one, on the fabric's listener
         * registry). The IP fabric passes {@code NetConnectionManager::new}. A manager that is also a
         * {@link ProgressAgent} is run on every engine pass.
         */
        public Builder connectionManager(Function<SoftProvider, ConnectionManager> factory) {
            this.connectionManagerFactory = Objects.requireNonNull(factory, "factory");
            return this;
        }

        public SoftProvider build() {
            if (threadPerDevice && threadingMode != ThreadingMode.DEDICATED) {
                throw new VerbsException("threadPerDevice(true) needs DEDICATED threading but the provider is " + threadingMode
                    + ": its caller's thread drives every device; drop threadPerDevice or use threadingMode(DEDICATED)");
            }
            if (threadPerDevice && oneIdleStrategy && devices > 1) {
                throw new VerbsException("threadPerDevice(true) runs " + devices + " engine threads, which cannot share the one idle "
                    + "strategy given to idleStrategy(..) (it keeps per-thread state); give idleStrategies(() -> new ...) instead");
            }
            if (!portRails.isEmpty() && portRails.lastKey() > portsPerDevice) {
                throw new VerbsException("portRail(" + portRails.lastKey() + ", ..) names a port beyond portsPerDevice "
                    + portsPerDevice + "; raise portsPerDevice or use a port in [1, " + portsPerDevice + "]");
            }
            return new SoftProvider(this);
        }
    }
}
