package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.net.NetConnectionManager;
import io.rdmaflux.verbs.soft.SoftProvider;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.jspecify.annotations.Nullable;

/**
 * The {@code ucx} verbs provider: soft NICs ({@link SoftDevice}) whose frames travel as UCX active
 * messages ({@link UcxFrameTransport}). Queue pairs are RC only; SEND consumes a posted receive and
 * raises RNR when none is posted, exactly as on the soft provider (the NIC's own RNR NAK and retry,
 * then RNR_RETRY_EXC_ERR), so receive-buffer credits keep their meaning; RDMA WRITE/READ and their
 * rkey, bounds and access checks are the soft NIC's, carried by UCX.
 *
 * <p><b>Not offered:</b> UD queue pairs and shared receive queues ({@link #CAPABILITIES}); asking for
 * either throws a {@link VerbsException} naming the provider. UCP has no unreliable datagram at its
 * API (its own UD transport is made reliable underneath).
 *
 * <p><b>Progress:</b> each device's engine (the soft NIC's {@code doWork}) drives its own UCP worker's
 * {@code progress()}, on the provider's thread (DEDICATED) or the caller's ({@link ThreadingMode#INVOKER}
 * through {@link #progress(long)}). <b>Idle wait</b> ({@link Wait}): an INVOKER provider with one
 * device blocks in {@link #awaitWork(long)} on its worker's event fd ({@link UcxEventWait}: UCX's
 * {@code arm()} and {@code waitForEvents()}, ended by an arriving frame, {@link #wakeup()} or the
 * deadline, which the NIC bounds by its next retransmission/RNR timer), so a node driving it sleeps
 * until UCX has something for it instead of parking blindly. A DEDICATED engine still parks
 * ({@link #MAX_IDLE_PARK_NS}): work posted from another thread does not wake it (the soft NIC's
 * posting path calls no {@code wakeup()}), so blocking on the fd would delay every post up to the
 * wait's deadline.
 *
 * <p><b>Reach:</b> {@link Cm#JVM} (default) connects devices of this JVM through the in-JVM connection
 * manager; {@link Cm#TCP} connects processes and hosts through a TCP connection manager whose exchange
 * carries each side's UCP worker addresses ({@link UcxConnectionManager}). Deviation from the issue's
 * plan: the addresses ride in the private data, not in a field of their own (see the README).
 *
 * <p><b>Concurrency:</b> as {@link RdmaProvider}: thread-safe; {@link #close()} is idempotent.
 */
public final class UcxProvider implements RdmaProvider {
    /** The provider name used with {@code RdmaProviders.open}. */
    public static final String NAME = "ucx";

    /**
     * What a ucx device offers: the soft NIC's limits, RC only (no UD, no SRQ), RDMA READ, and the verbs
     * atomics. Atomics are the soft NIC's (the responder's NIC runs them on its memory and answers the
     * original value, with its replay cache for duplicates), carried by UCX active messages like every other
     * frame; they are not UCP atomics ({@code ucp_atomic_op_nbx}), which JUCX 1.18 does not expose
     * ({@code UcpEndpoint} has put, get, tag, stream and active-message calls only).
     */
    public static final DeviceCapabilities CAPABILITIES = new DeviceCapabilities(
        SoftDevice.CAPABILITIES.maxQueuePairs(), SoftDevice.CAPABILITIES.maxQpWorkRequests(),
        SoftDevice.CAPABILITIES.maxScatterGather(), SoftDevice.CAPABILITIES.maxCqEntries(),
        SoftDevice.CAPABILITIES.maxMemoryRegionBytes(), SoftDevice.CAPABILITIES.maxMessageBytes(),
        SoftDevice.CAPABILITIES.maxInlineBytes(), false, false, true, false, true);

    /**
     * The floor under queue pairs' transport timeout, ns (50 ms): UCX connects an endpoint on its first
     * send (wireup), which over {@code tcp} took up to ~10 ms on a loaded two-core host; a shorter
     * timeout would fail a live peer with RETRY_EXC_ERR. Hardware HCAs round their timeout up likewise.
     */
    public static final long MIN_RETRY_TIMEOUT_NS = 50_000_000L;

    /**
     * Longest park of an idle DEDICATED engine, ns (10 µs; the soft provider parks up to 200 µs). A UCX
     * message is only found by progressing the worker (JUCX has no timed blocking wait), and over
     * {@code tcp} UCX also needs progress to finish connecting and sending: with 200 µs parks, two
     * DEDICATED providers on a loaded two-core host took up to 600 ms for 200 SENDs and failed some
     * with RETRY_EXC_ERR; with 10 µs, 20–60 ms and no retransmission.
     */
    public static final long MAX_IDLE_PARK_NS = 10_000L;

    /** Whether RDMA WRITEs go as {@code ucp_put}, and READs above 4 KiB as {@code ucp_get} ({@link UcxPutPath}; option {@code put}). */
    public enum Put {
        /**
         * Yes, unless the transports are {@code tcp} only: there UCX emulates puts and gets, and both measured
         * slower than frames (puts 1.1-3.1x slower; gets 0.50-1.12x the frames at 64 KiB, 0.84-1.03x at 1 MiB).
         */
        AUTO,
        /** Yes, on any transport. */
        ON,
        /** Never: every WRITE and READ goes as the NIC's frames (as before the put path). */
        OFF
    }

    /** How an idle INVOKER engine waits for UCX ({@link #awaitWork(long)}). */
    public enum Wait {
        /**
         * Block on the worker's event fd until a UCX event, {@link #wakeup()} or the deadline (default).
         * One device only: with several, {@code awaitWork} returns false (one thread cannot block on two
         * fds through JUCX).
         */
        EVENT,
        /** Never block: {@code awaitWork} returns false and the caller parks (the behaviour before the event wait). */
        PARK
    }

    /**
     * Which connection manager a provider uses, and so which devices its queue pairs reach.
     */
    public enum Cm {
        /**
         * The in-JVM connection manager on a JVM-wide fabric: listen and connect at a device's address
         * ({@code ucx://<device>:<port>}, port 0 = any); reaches the devices of every {@code cm=jvm}
         * provider of this JVM with the same {@code tls}, and nothing outside the JVM.
         */
        JVM,
        /**
         * The TCP connection manager ({@link UcxConnectionManager}, over the soft IP fabric's
         * {@code NetConnectionManager}): listen and connect at {@code ucx://<ip>:<tcp port>}; each side's
         * UCX worker addresses travel in the exchange, so queue pairs reach the devices of peers in
         * other processes or hosts (over UCX {@code tcp}, or RDMA transports where present), and of
         * other providers in this JVM only through such an exchange (each provider has its own
         * directory and UCX contexts).
         */
        TCP
    }

    private final SoftProvider nics;
    private final @Nullable String tls;
    private final Cm cm;
    private final Wait wait;
    private final Put put;
    private final long revokeTimeoutNs;
    private final UcxDirectory directory;
    private final Runnable releaseFabric;
    private volatile boolean closed;

    private UcxProvider(Builder b) {
        this.tls = b.tls;
        this.cm = b.cm;
        this.wait = b.wait;
        this.put = b.put;
        this.revokeTimeoutNs = b.revokeTimeoutNs;
        if (b.cmHost != null && b.cm != Cm.TCP) {
            throw new VerbsException("cmHost '" + b.cmHost + "' is for cm=tcp (the TCP connection manager), but cm is "
                + b.cm.name().toLowerCase(java.util.Locale.ROOT) + "; drop cmHost or use cm=tcp");
        }
        SoftFabric fabric;
        String suffix = null;
        if (b.cm == Cm.JVM) {
            boolean rma = putEnabled(b.put, b.tls);
            fabric = UcxFabrics.acquire(b.tls, rma);
            this.directory = UcxDirectory.JVM;
            this.releaseFabric = () -> UcxFabrics.release(b.tls, rma);
        } else {
            suffix = String.format("%012x", new java.security.SecureRandom().nextLong() & 0xFFFF_FFFF_FFFFL);
            this.directory = new UcxDirectory("ucx provider " + (b.name != null ? b.name : suffix) + " (cm=tcp)");
            UcxFrameTransport transport = new UcxFrameTransport(b.tls, directory, putEnabled(b.put, b.tls));
            fabric = SoftFabric.over("ucx-" + suffix + (b.tls == null ? "" : "[" + b.tls + "]"), transport);
            this.releaseFabric = transport::close;
        }
        try {
            SoftProvider.Builder sb = SoftProvider.builder().providerName(NAME).fabric(fabric).clock(b.clock)
                .threadingMode(b.threadingMode).devices(b.devices).portsPerDevice(b.portsPerDevice).capabilities(CAPABILITIES)
                .minRetryTimeoutNs(MIN_RETRY_TIMEOUT_NS)
                .idleStrategy(new BackoffIdleStrategy(10, 10, 1_000, MAX_IDLE_PARK_NS));
            List<String> names = new java.util.ArrayList<>();
            for (int i = 0; i < b.devices; i++) {
                names.add(suffix == null ? UcxFrameTransport.nextDeviceName() : UcxFrameTransport.nextDeviceName(suffix));
            }
            sb.deviceNames(names);
            if (b.cm == Cm.TCP) {
                UcxDirectory dir = directory;
                String cmHost = b.cmHost;
                sb.connectionManager(p -> new UcxConnectionManager(new NetConnectionManager(p), dir, cmHost));
            }
            if (b.name != null) {
                sb.name(b.name);
            }
            this.nics = b.customizer.apply(sb).build();
        } catch (RuntimeException e) {
            releaseFabric.run();
            throw e;
        }
        for (Device d : nics.devices()) {
            UcxAttachment a = directory.local(d.name());
            if (a != null) {
                a.eventWait(wait == Wait.EVENT);
                a.putPath(putEnabled(put, tls));
                a.revokeTimeoutNs(revokeTimeoutNs);
            }
        }
    }

    /**
     * Whether RDMA WRITEs may go as {@code ucp_put} ({@link UcxPutPath}): {@link Put#ON}, or {@link Put#AUTO}
     * unless {@code tls} names {@code tcp} only (UCX then emulates a put with active messages plus a flush
     * round trip, and a get likewise, which measured slower than the frames: see the README). The same
     * answer selects READs above 4 KiB as {@code ucp_get}.
     */
    static boolean putEnabled(Put put, @Nullable String tls) {
        if (put != Put.AUTO) {
            return put == Put.ON;
        }
        if (tls == null) {
            return true;
        }
        for (String t : tls.split(",")) {
            if (!t.trim().equalsIgnoreCase("tcp")) {
                return true;
            }
        }
        return false;
    }

    /** Whether device {@code index} sends RDMA WRITEs as {@code ucp_put} when it can (option {@code put}). */
    public boolean putPathEnabled(int index) {
        UcxAttachment a = directory.local(nics.devices().get(index).name());
        return a != null && a.putPathEnabled();
    }

    /** A builder; defaults: one device, DEDICATED, system clock, UCX's default transports. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return NAME;
    }

    /** The UCX transports asked for ({@code UCX_TLS} syntax), or null for UCX's default. */
    public @Nullable String tls() {
        return tls;
    }

    /**
     * Frames device {@code index} handed to UCX and received from it so far: {@code [sent, received]}.
     * Read on the engine thread (INVOKER) or for monitoring (values may lag).
     */
    public long[] frameCounts(int index) {
        UcxAttachment a = directory.local(nics.devices().get(index).name());
        return a == null ? new long[2] : new long[] {a.framesSent(), a.framesReceived()};
    }

    /**
     * The put path of device {@code index} ({@code ucp_put} RDMA WRITEs, see the README):
     * {@code [WRITEs sent as puts, their bytes, rkey requests sent, rkeys received, regions mapped for peers so far,
     * regions mapped now, revocations sent, READs fetched with ucp_get, their bytes]}. Read on the engine thread (INVOKER) or for monitoring (values may lag).
     */
    public long[] putCounts(int index) {
        UcxAttachment a = directory.local(nics.devices().get(index).name());
        return a == null ? new long[9] : new long[] {a.puts(), a.putBytes(), a.rkeyRequests(), a.rkeysReceived(), a.regionsMapped(),
            a.regionsMappedNow(), a.revokesSent(), a.gets(), a.getBytes()};
    }

    /**
     * Deregistrations of device {@code index} and how their revocation went ({@link UcxRegionExports}):
     * {@code [waited for the peers' acknowledgements, could not wait (on the engine thread or a closing device),
     * waits that ended before the engine settled the revocation, revocations settled by timing out a silent peer,
     * asynchronous deregistrations ({@link io.rdmaflux.verbs.MemoryRegion#deregisterAsync()}) of regions whose key went to peers]}.
     * Any thread (monitoring; the last values may lag).
     */
    public long[] revocationCounts(int index) {
        UcxAttachment a = directory.local(nics.devices().get(index).name());
        return a == null ? new long[5] : new long[] {a.deregistrationsAwaited(), a.deregistrationsNotAwaited(),
            a.deregistrationWaitsExpired(), a.revocationsTimedOut(), a.deregistrationsAsync()};
    }

    /** How long a deregistration waits for the revocation of its region's UCX rkey, ns (option {@code revoke-timeout}). */
    public long revokeTimeoutNs() {
        return revokeTimeoutNs;
    }

    /** How an idle INVOKER engine waits ({@link Wait#EVENT} or {@link Wait#PARK}). */
    public Wait idleWait() {
        return wait;
    }

    /** Event-fd waits device {@code index} blocked in so far (monitoring; may lag). */
    public long eventWaits(int index) {
        UcxAttachment a = directory.local(nics.devices().get(index).name());
        return a == null ? 0 : a.eventWaits();
    }

    /** The connection manager in use ({@link Cm#JVM} or {@link Cm#TCP}). */
    public Cm cm() {
        return cm;
    }

    /** Devices this provider can resolve addresses of: its own, and with {@code cm=tcp} the peers' it learned. */
    public int knownDevices() {
        return directory.size();
    }

    /** The soft NICs underneath (fault injection and counters in tests). */
    public SoftProvider nics() {
        return nics;
    }

    @Override
    public List<Device> devices() {
        return nics.devices();
    }

    @Override
    public ConnectionManager connectionManager() {
        return nics.connectionManager();
    }

    @Override
    public ThreadingMode threadingMode() {
        return nics.threadingMode();
    }

    @Override
    public int progress(long nowNs) {
        return nics.progress(nowNs);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here (INVOKER, one device, {@link Wait#EVENT}): blocks on the device's UCP worker event fd
     * until a UCX event, {@link #wakeup()}, or {@code timeoutNs} bounded by the NIC's next
     * retransmission/RNR timer; a bound under {@link UcxEventWait#MIN_WAIT_NS} (20 µs) returns false.
     * Otherwise returns false at once.
     */
    @Override
    public boolean awaitWork(long timeoutNs) {
        return nics.awaitWork(timeoutNs);
    }

    @Override
    public void wakeup() {
        nics.wakeup();
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            nics.close();
        } finally {
            releaseFabric.run();
        }
    }

    @Override
    public String toString() {
        return "UcxProvider{" + nics.instanceName() + ", tls=" + (tls == null ? "default" : tls) + ", cm=" + cm.name().toLowerCase(java.util.Locale.ROOT) + "}";
    }

    /** Builds a {@link UcxProvider}. */
    public static final class Builder {
        private @Nullable String name;
        private @Nullable String tls;
        private NanoClock clock = new SystemNanoClock();
        private ThreadingMode threadingMode = ThreadingMode.DEDICATED;
        private int devices = 1;
        private int portsPerDevice = 1;
        private Cm cm = Cm.JVM;
        private Wait wait = Wait.EVENT;
        private Put put = Put.AUTO;
        private long revokeTimeoutNs = UcxRegionExports.DEFAULT_REVOKE_TIMEOUT_NS;
        private @Nullable String cmHost;
        private UnaryOperator<SoftProvider.Builder> customizer = UnaryOperator.identity();

        private Builder() {
        }

        /** Instance name (thread {@code rdmaflux-soft-<name>}). */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * UCX transports in {@code UCX_TLS} syntax: {@code tcp}, {@code sm,self} (shared memory, one
         * host), {@code rc,ud} (InfiniBand/RoCE); null (default) leaves it to UCX (the environment's
         * {@code UCX_TLS}, else every transport it finds).
         *
         * @throws VerbsException if blank
         */
        public Builder tls(@Nullable String tls) {
            if (tls != null && tls.isBlank()) {
                throw new VerbsException("tls must name UCX transports (e.g. tcp or sm,self) or be null for UCX's default, but it was blank");
            }
            this.tls = tls == null ? null : tls.trim();
            return this;
        }

        /** The clock for the NICs' timers (default: system nano clock). UCX itself runs in real time. */
        public Builder clock(NanoClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** DEDICATED (default: one engine thread per provider) or INVOKER (the caller drives progress). */
        public Builder threadingMode(ThreadingMode mode) {
            this.threadingMode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** Number of devices (each its own UCP worker), in [1, 64]. */
        public Builder devices(int count) {
            if (count < 1 || count > 64) {
                throw new VerbsException("devices must be in [1, 64] but it was " + count);
            }
            this.devices = count;
            return this;
        }

        /**
         * Ports per device, in [1, 16] (default 1): one rail each, so rdmaflux stripes over them as over
         * the ports of an HCA. All ports of a device share its UCP worker.
         *
         * @throws VerbsException naming the count when outside [1, 16]
         */
        public Builder portsPerDevice(int count) {
            if (count < 1 || count > 16) {
                throw new VerbsException("portsPerDevice must be in [1, 16] but it was " + count);
            }
            this.portsPerDevice = count;
            return this;
        }

        /**
         * The connection manager (default {@link Cm#JVM}: devices of this JVM only, as before);
         * {@link Cm#TCP} to reach other processes.
         */
        public Builder cm(Cm cm) {
            this.cm = Objects.requireNonNull(cm, "cm");
            return this;
        }

        /**
         * Whether RDMA WRITEs go as {@code ucp_put} where they can (default {@link Put#AUTO}: yes unless the
         * transports are {@code tcp} only; see the module README).
         */
        public Builder put(Put put) {
            this.put = Objects.requireNonNull(put, "put");
            return this;
        }

        /**
         * How long deregistering a region whose UCX rkey went to peers waits for them to acknowledge its
         * revocation, in ms, in [1, 600000] (default 1000). A peer still silent then is taken for failed:
         * the routes to it fail (RETRY_EXC_ERR on the queue pairs there) and its endpoint is closed where
         * UCX allows. Choose it above the peers' worst progress gap, as a verbs transport timeout.
         *
         * @throws VerbsException naming the value when outside [1, 600000]
         */
        public Builder revokeTimeoutMs(long ms) {
            if (ms < 1 || ms > 600_000) {
                throw new VerbsException("revoke-timeout must be in [1, 600000] ms but it was " + ms
                    + "; it bounds how long a deregistration waits for peers to drop the region's UCX rkey");
            }
            this.revokeTimeoutNs = ms * 1_000_000L;
            return this;
        }

        /** How an idle INVOKER engine waits (default {@link Wait#EVENT}). */
        public Builder idleWait(Wait wait) {
            this.wait = Objects.requireNonNull(wait, "wait");
            return this;
        }

        /**
         * With {@code cm=tcp}: the IP the connection manager listens on when asked to listen at one of
         * this provider's device addresses ({@code ucx://<device>:<port>}, as code written for
         * {@code cm=jvm} and the named-provider Connection TCK do), e.g. {@code 127.0.0.1}; the
         * listener's address is then {@code ucx://<cmHost>:<bound tcp port>}. Unset (default), such a
         * listen is refused naming the {@code ucx://<ip>:<tcp port>} form.
         *
         * @throws VerbsException if blank
         */
        public Builder cmHost(String host) {
            Objects.requireNonNull(host, "host");
            if (host.isBlank()) {
                throw new VerbsException("cmHost must be an IP or host name to listen on (e.g. 127.0.0.1), but it was blank");
            }
            this.cmHost = host.trim();
            return this;
        }

        /** Further settings of the soft NICs underneath (rail model, idle strategy); tests use it. */
        public Builder nics(UnaryOperator<SoftProvider.Builder> customizer) {
            this.customizer = Objects.requireNonNull(customizer, "customizer");
            return this;
        }

        /**
         * Opens the provider.
         *
         * @throws io.rdmaflux.verbs.ProviderUnavailableException when UCX cannot run here
         * @throws VerbsException when UCX rejects the transports
         */
        public UcxProvider build() {
            return new UcxProvider(this);
        }
    }
}
