package io.rdmaflux.samples;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.RdmaMessage;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.striping.connection.RailsChannelFactory;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rdmaflux.micrometer.RdmaNodeMetrics;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The main job: streams a real file over a multi-rail connection as a {@code Flux} of chunks and
 * verifies what arrived. See {@code --help}.
 */
@Command(name = "pipeline", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
        "Streams a file (or every file under a directory) in chunks as a Flux over a multi-rail rdmaflux connection, "
            + "by default inside this JVM on the soft provider's in-JVM fabric over shaped rails (or between two processes over IP with --listen/--connect), with adaptive striping, and verifies the SHA-256 of what arrived.",
        "Record mode (--records) also parses lines into records and counts their fields (words), with backpressure end to end.",
        "Default input: the first 64 MiB of $JAVA_HOME/lib/modules (records: $JAVA_HOME/legal)."})
public final class PipelineCommand implements Callable<Integer> {
    static final int DEFAULT_LIMIT_MIB = 64;
    /** Receive (and send) buffers per rail for messages up to one buffer (rendezvous covers larger ones). */
    static final int RECEIVE_BUFFERS = 32;

    @Spec
    CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "INPUT", description = "File or directory to stream.")
    Path input;

    @Option(names = "--records", description = "Record mode: parse lines into records and count words.")
    boolean records;

    @Option(names = "--limit-mib", paramLabel = "N", description = "Stream at most the first N MiB (default ${DEFAULT-VALUE}).")
    long limitMib = DEFAULT_LIMIT_MIB;

    @Option(names = "--all", description = "Stream the whole input, ignoring --limit-mib.")
    boolean all;

    @Option(names = "--rails", paramLabel = "N|DEV:PORT,..", description = RailsOption.HELP + " (default ${DEFAULT-VALUE}).")
    String railsOption = "2";

    @Option(names = "--devices", paramLabel = "N", description = RailsOption.DEVICES_HELP + ".")
    @Nullable Integer devices;

    /** The rail count {@code --rails} gives (or the addresses). */
    int rails;

    @Option(names = "--rail-rates", paramLabel = "MIBPS", split = ",",
        description = "Bandwidth per rail in MiB/s, one per rail, 0 = unshaped (default 96,24: 4:1 so the adaptive weights show).")
    List<Long> railRates;

    @Option(names = "--latency-us", paramLabel = "US", description = "One-way latency of every rail in µs (default 5; ucx: not shaped).")
    @Nullable Long latencyUs;

    @Option(names = "--policy", paramLabel = "POLICY", description = "Scheduling policy: " + Policies.CHOICES + " (default ${DEFAULT-VALUE}).")
    String policy = "adaptive";

    @Option(names = "--chunk-kib", paramLabel = "KIB", description = "Chunk (message) size in KiB, 1..1024 (default ${DEFAULT-VALUE}).")
    int chunkKib = 256;

    @Option(names = "--buffer-kib", paramLabel = "KIB", description = "Send/receive buffer size in KiB, 1..1024 (default ${DEFAULT-VALUE}).")
    int bufferKib = 64;

    @Option(names = "--in-flight", paramLabel = "N",
        description = "Chunks in flight: registered message buffers per node for large messages (rendezvous), and the consumer's prefetch, 1..64 (default ${DEFAULT-VALUE}).")
    int inFlight = 48;

    @picocli.CommandLine.Mixin
    NetOptions net = new NetOptions();

    @Option(names = "--report-dir", paramLabel = "DIR", description = "Where the HTML report goes (default: reports/ of the checkout).")
    Path reportDir;

    @Option(names = "--weights-out", paramLabel = "FILE",
        description = "Write the striping policy's weights (one share per rail) every " + WeightLog.PERIOD_MS + " ms while sending: "
            + "'epoch_s share1 share2 ..' per line. Sender side only (in-JVM or --connect); policies adaptive, even, weighted, window-rr.")
    @Nullable Path weightsOut;

    @Option(names = "--no-progress", description = "No progress bar.")
    boolean noProgress;

    @Option(names = "--metrics", description = "Print the Micrometer meters of both nodes (rdmaflux-micrometer) after the run (in-JVM mode).")
    boolean metrics;

    @Option(names = "--eager", paramLabel = "on|off", description = "The eager RDMA ring for small messages (seed 001 §4; "
        + "default on, or what --transport implies): off runs every message over send/receive. With --transport it must agree: "
        + "on needs an eager rail, off allows none.")
    @Nullable String eager;

    @Option(names = "--transport", paramLabel = "rc|eager|ud|rc-dr", description = "The channel kind of every rail, or a comma list of one per rail, "
        + "insisted on: rc = RC send/receive, eager = eager RDMA ring over RC (seed 001 §4), ud = reliable UD (seed 003 §4, module "
        + "ud-reliable), rc-dr = RC checked end to end by DR (CRC32C + acknowledgement, seed 003 §3.1). Default: eager where both nodes offer it, else rc (as --eager says).")
    @Nullable String transport;

    @Option(names = "--provider", paramLabel = "soft|ucx", description = "RDMA provider: soft (default; shaped rails) or ucx "
        + "(UCX via JUCX, rails unshaped: both hosts in this JVM, or two processes with --listen/--connect through its TCP connection manager; "
        + "needs the system's UCX library, e.g. apt-get install libucx0).")
    String provider = "soft";

    @Option(names = "--fabric", paramLabel = "sm|tcp", description = "With --provider ucx: sm (UCX shared memory; default in one JVM) or tcp "
        + "(UCX over TCP; default with --listen/--connect).")
    @Nullable String fabric;

    @Option(names = "--verbose", description = "Print stack traces of errors.")
    boolean verbose;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        Settings s = settings();
        // the digest compiles while the rails open (DigestWarmup says why); every path below waits for it or outlives it
        try (DigestWarmup warmup = DigestWarmup.start()) {
            if (s.net != null && s.net.listen() != null) {
                return NetPipeline.receive(s, s.net.rails(), s.net.listen(), s.net.timeout(), out).verified() ? 0 : 3;
            }
            FileSource source = FileSource.open(s.input, s.limitBytes);
            if (s.net != null && s.net.connect() != null) {
                return NetPipeline.send(s, s.net.rails(), s.net.connect(), source, s.net.timeout(), out, warmup).verified() ? 0 : 3;
            }
            Result r = run(s, source, out, warmup);
            return r.verified ? 0 : 3;
        }
    }

    /** How long the transfer waits at most for {@link DigestWarmup}, ms: longer would cost more than it saves. */
    static final long WARMUP_WAIT_MS = 300;

    /** The two-process mode: exactly one of {@code listen} and {@code connect} is set. */
    record Net(NetRails.@Nullable HostPort listen, NetRails.@Nullable HostPort connect, NetRails.Settings rails, Duration timeout) {
    }

    /** Validated settings. */
    record Settings(Path input, long limitBytes, boolean records, List<Long> railBytesPerSec, long latencyNs,
                    String policy, int chunkBytes, int bufferBytes, int inFlight, Path reportDir, boolean progress, @Nullable Net net,
                    @Nullable Path weightsOut, boolean metrics, boolean eager, String provider, @Nullable String fabric,
                    @Nullable List<ChannelKind> kinds, @Nullable SoftRailLayout layout) {
        /** Messages the consumer's {@code publishOn} holds: as many as can be in flight. */
        int prefetch() {
            return inFlight;
        }
    }

    Settings settings() {
        RailsOption.Parsed railsParsed = RailsOption.parse(railsOption, devices, 2);
        rails = railsParsed.count();
        if (!all && limitMib < 1) {
            throw new UserError("--limit-mib must be >= 1 but it was " + limitMib + "; use --all for the whole input");
        }
        if (chunkKib < 1 || chunkKib > 1024) {
            throw new UserError("--chunk-kib must be in 1..1024 but it was " + chunkKib);
        }
        if (bufferKib < 1 || bufferKib > 1024) {
            throw new UserError("--buffer-kib must be in 1..1024 but it was " + bufferKib);
        }
        if (latencyUs != null && (latencyUs < 0 || latencyUs > 1_000_000)) {
            throw new UserError("--latency-us must be in 0..1000000 but it was " + latencyUs);
        }
        if (inFlight < 1 || inFlight > 64) {
            throw new UserError("--in-flight must be in 1..64 but it was " + inFlight);
        }
        NetOptions.Parsed peer = net.parse(rails, "--listen/--connect");
        boolean netMode = peer.peerMode();
        if (peer.listen() != null && input != null) {
            throw new UserError("the receiver (--listen) takes no INPUT; give " + input + " to the sender (--connect)");
        }
        List<String> addrs = peer.addresses();
        if (addrs != null) {
            rails = addrs.size();
        }
        boolean ucx = checkProvider();
        railsParsed.requireOneDevice(ucx, "--provider ucx").requireOneDevice(netMode, "--listen/--connect");
        List<Long> rates = railRates != null ? railRates : ucx ? java.util.Collections.nCopies(rails, 0L) : defaultRates(rails);
        if (rates.size() != rails) {
            throw new UserError("--rail-rates gives " + rates.size() + " rates for " + rails + " rails; give one per rail, e.g. --rail-rates "
                + String.join(",", defaultRates(rails).stream().map(String::valueOf).toList()));
        }
        List<Long> bytesPerSec = new ArrayList<>();
        for (long mibps : rates) {
            if (mibps < 0 || mibps > 1_000_000) {
                throw new UserError("--rail-rates values must be in 0..1000000 MiB/s (0 = unshaped) but one was " + mibps);
            }
            bytesPerSec.add(mibps == 0 ? Long.MAX_VALUE : mibps << 20);
        }
        ChannelFactory factory = Policies.parse(policy, rails);
        if (weightsOut != null && peer.listen() != null) {
            throw new UserError("--weights-out applies to the sender: the receiver (--listen) schedules no striped data; give it to the --connect side");
        }
        if (weightsOut != null && !(factory instanceof RailsChannelFactory)) {
            throw new UserError("--weights-out needs a policy with weights (adaptive, even, weighted:.., window-rr:N) but --policy was " + policy
                + ", which sends each message whole on one rail");
        }
        Path in = input != null ? input : defaultInput(records);
        Path reports = reportDir != null ? reportDir : defaultReportDir();
        int chunkBytes = chunkKib << 10;
        int bufferBytes = (bufferKib << 10) + 64;
        Net netSettings = null;
        TransportOption.Choice transportChoice = TransportOption.parse(transport, eager, rails);
        if (netMode && metrics) {
            throw new UserError("--metrics applies to the in-JVM pipeline; drop --listen/--connect or --metrics");
        }
        if (netMode) {
            // the receiver cannot know the sender's --chunk-kib in advance: it accepts the largest allowed
            int maxMessage = peer.listen() != null ? 1 << 20 : chunkBytes;
            NetRails.Settings ns = new NetRails.Settings(addrs, railRates != null ? bytesPerSec : null, bufferBytes, RECEIVE_BUFFERS,
                maxMessage, inFlight, factory).eager(transportChoice.eager()).channelKinds(transportChoice.kinds())
                .ucx(ucx ? InJvmNics.ucxTls(BenchCommand.ucxFabric(fabric, true)) : null);
            netSettings = new Net(peer.listen(), peer.connect(), ns, peer.timeout());
        }
        return new Settings(in, all ? Long.MAX_VALUE : limitMib << 20, records, bytesPerSec, (latencyUs != null ? latencyUs : ucx ? 0 : 5) * 1000, policy,
            chunkBytes, bufferBytes, inFlight, reports, !noProgress, netSettings, weightsOut, metrics,
            transportChoice.eager(), provider, ucx ? BenchCommand.ucxFabric(fabric, netMode) : null, transportChoice.kinds(),
            railsParsed.layout());
    }

    /**
     * Checks {@code --provider} and {@code --fabric}; true for ucx. UCX rails are not shaped, and UCX
     * picks its interfaces itself, so shaping and {@code --addresses} are refused by name.
     */
    private boolean checkProvider() {
        if ("soft".equals(provider)) {
            if (fabric != null) {
                throw new UserError("--fabric " + fabric + " applies to --provider ucx; the soft pipeline runs on the in-JVM mem fabric "
                    + "(or over IP with --listen/--connect): drop --fabric");
            }
            return false;
        }
        if (!"ucx".equals(provider)) {
            throw new UserError("--provider " + provider + " is not one the pipeline runs on; use " + InJvmNics.PROVIDERS);
        }
        if (net.addresses != null) {
            throw new UserError("--provider ucx takes no --addresses: UCX picks its interfaces itself (UCX_NET_DEVICES narrows them); "
                + "give the rail count with --rails");
        }
        if ((latencyUs != null && latencyUs != 0) || (railRates != null && railRates.stream().anyMatch(r -> r != 0))) {
            throw new UserError("the ucx provider's rails cannot be shaped (UCX runs them at its own speed); drop --rail-rates and --latency-us, "
                + "or use --provider soft");
        }
        InJvmNics.ucxTls(fabric); // names a bad --fabric
        return true;
    }

    static List<Long> defaultRates(int rails) {
        List<Long> r = new ArrayList<>();
        for (int i = 0; i < rails; i++) {
            r.add(i == 0 ? 96L : 24L);
        }
        return r;
    }

    static Path defaultInput(boolean records) {
        Path home = Path.of(System.getProperty("java.home"));
        return records ? home.resolve("legal") : home.resolve("lib").resolve("modules");
    }

    static Path defaultReportDir() {
        String home = System.getProperty("rdmaflux.home");
        return home != null ? Path.of(home, "reports") : Path.of("reports");
    }

    /** What one run measured. */
    record Result(boolean verified, long bytes, double seconds, long[] railBytes, long outOfOrder, long creditStalls,
                  Path report, WordCounts counts) {
    }

    static Result run(Settings s, FileSource source, PrintWriter out, DigestWarmup warmup) {
        MessageDigest sourceDigest = sha256();
        MessageDigest receivedDigest = sha256();
        AtomicLong received = new AtomicLong();
        AtomicLong firstByteAtNs = new AtomicLong();
        WordCounts counts = s.records ? new WordCounts() : null;
        // rendezvous buffers are maxMessageBytes each: sized to the chunk, so in-flight costs no idle memory; a chunk
        // marshalled as records (RecordBatch) grows by a stop-bit length per line: at most 2x (lines of one byte)
        InJvmRails.Settings railSettings = new InJvmRails.Settings(s.railBytesPerSec, s.latencyNs, s.bufferBytes, RECEIVE_BUFFERS,
            s.records ? 2 * s.chunkBytes : s.chunkBytes, s.inFlight, Policies.parse(s.policy, s.railBytesPerSec.size()),
            EagerOption.spec(s.eager)).on(s.provider, s.fabric).channelKinds(s.kinds).layout(s.layout);
        Scheduler producer = Schedulers.newSingle("rdmaflux-producer");
        Scheduler consumer = Schedulers.newSingle("rdmaflux-consumer");
        ProgressBar bar = s.progress ? new ProgressBarBuilder().setTaskName(s.records ? "records" : "streaming")
            .setInitialMax(source.totalBytes()).setUnit("MiB", 1 << 20).setStyle(ProgressBarStyle.ASCII)
            .setUpdateIntervalMillis(100).showSpeed().build() : null;
        try (InJvmRails rails = InJvmRails.open(railSettings)) {
            SimpleMeterRegistry meters = s.metrics() ? new SimpleMeterRegistry() : null;
            if (meters != null) {
                RdmaNodeMetrics.Builder sender = RdmaNodeMetrics.builder(rails.senderNode());
                if (railSettings.policy() instanceof RailsChannelFactory weights) {
                    sender.striping(weights);
                }
                sender.build().bindTo(meters);
                RdmaNodeMetrics.of(rails.receiverNode()).bindTo(meters);
            }
            byte[] scratch = new byte[s.chunkBytes];
            // record mode: each chunk's lines travel as records marshalled with Chronicle Bytes (RecordBatch)
            Mono<Void> receiving = rails.receiver().receive()
                .publishOn(consumer, s.prefetch())
                .doOnNext(m -> {
                    if (firstByteAtNs.get() == 0) {
                        firstByteAtNs.set(System.nanoTime());
                    }
                    if (counts != null) {
                        received.addAndGet(RecordBatch.unmarshal(m, scratch, receivedDigest, counts));
                    } else {
                        consume(m, scratch, receivedDigest, null, received);
                    }
                })
                .then();
            Flux<RdmaMessage> chunks = source.chunks(s.chunkBytes, s.records, sourceDigest);
            Mono<Void> sending = rails.sender().send((s.records ? chunks.map(RecordBatch::marshal) : chunks).subscribeOn(producer))
                .then(Mono.fromRunnable(rails.sender()::close));
            // the instruments and the two scheduler threads start before the clock: the run times the transfer
            WeightLog weightLog = weightLog(s, railSettings.policy(), rails.sender(), "pipeline (in-JVM)");
            Sampler sampler = new Sampler(received::get, rails::railBytes, 100, bytes -> {
                if (bar != null) {
                    bar.stepTo(bytes);
                }
            });
            startThreads(producer, consumer);
            warmup.awaitReady(WARMUP_WAIT_MS);
            long t0 = System.nanoTime();
            sampler.startAt(t0);
            try {
                Mono.when(sending, receiving).block(Duration.ofHours(1));
            } finally {
                sampler.close();
                if (weightLog != null) {
                    weightLog.close();
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            List<Sampler.Sample> samples = sampler.finish(received::get, rails::railBytes);
            if (bar != null) {
                bar.stepTo(received.get());
                bar.close();
            }
            long[] railBytes = rails.railBytes();
            String src = HexFormat.of().formatHex(sourceDigest.digest());
            String dst = HexFormat.of().formatHex(receivedDigest.digest());
            boolean ok = src.equals(dst) && received.get() == source.totalBytes();
            double firstByteMs = firstByteAtNs.get() == 0 ? Double.NaN : (firstByteAtNs.get() - t0) / 1e6;
            List<String> lines = summary(s, source, rails, received.get(), seconds, firstByteMs, railBytes, samples,
                rails.receiver().metrics().outOfOrder(), rails.creditStalls(), src, dst, ok, counts);
            String weights = weightsRow(railSettings.policy(), rails.sender());
            if (weights != null) {
                lines.add(4 + railBytes.length + 1, weights);
            }
            Path report = ReportWriter.write(s.reportDir, s.records ? "records" : "pipeline",
                "rdmaflux pipeline: " + s.input.getFileName(), lines, samples, rails.rails());
            lines.forEach(out::println);
            out.println(String.format(Locale.ROOT, "  %-17s%s", "report", report));
            if (meters != null) {
                out.println("meters (rdmaflux-micrometer, both nodes):");
                out.println(meters.getMetersAsString());
            }
            out.flush();
            return new Result(ok, received.get(), seconds, railBytes, rails.receiver().metrics().outOfOrder(), rails.creditStalls(),
                report, counts);
        } finally {
            if (bar != null) {
                bar.close();
            }
            producer.dispose();
            consumer.dispose();
        }
    }

    static void consume(RdmaMessage m, byte[] scratch, MessageDigest digest, WordCounts counts, AtomicLong received) {
        try {
            int len = m.lengthBytes();
            DirectBuffer content = m.content();
            content.getBytes(0, scratch, 0, len);
            digest.update(scratch, 0, len);
            if (counts != null) {
                counts.add(content, len);
            }
            received.addAndGet(len);
        } finally {
            m.release();
        }
    }

    private static List<String> summary(Settings s, FileSource source, InJvmRails rails, long bytes, double seconds, double firstByteMs,
                                        long[] railBytes,
                                        List<Sampler.Sample> samples, long outOfOrder, long stalls, String src, String dst, boolean ok,
                                        WordCounts counts) {
        List<String> l = new ArrayList<>();
        String capped = source.totalBytes() < source.availableBytes()
            ? String.format(Locale.ROOT, " (first %s of %s; --all for everything)", mib(source.totalBytes()), mib(source.availableBytes()))
            : "";
        l.add(String.format(Locale.ROOT, "rdmaflux pipeline%s: %s of %s%s, %d file(s)", s.records ? " --records" : "", mib(bytes),
            s.input, capped, source.fileCount()));
        l.add(row("transport", rails.rails() + " rails, " + rails.describe() + ", policy " + s.policy
            + ", " + (s.chunkBytes >> 10) + " KiB chunks"));
        l.add(row("elapsed", String.format(Locale.ROOT, "%.2f s", seconds)
            + (Double.isNaN(firstByteMs) ? "" : String.format(Locale.ROOT, " (the first chunk arrived %.0f ms after the start)", firstByteMs))));
        l.add(row("throughput", String.format(Locale.ROOT, "%.1f MiB/s", bytes / seconds / (1 << 20))));
        String efficiency = efficiency(bytes, seconds, rails.rails(), rails::railBytesPerSec);
        if (efficiency != null) {
            l.add(row("efficiency", efficiency));
        }
        railRows(l, railBytes, samples, rails::railBytesPerSec);
        l.add(row("out-of-order", outOfOrder + " messages waited in the reorder queue for an earlier PSN"));
        l.add(row("credit stalls", stalls + " times the sender had a message and no rail had a credit"));
        if (counts != null) {
            l.add(row("records", String.format(Locale.ROOT, "%d lines, %d words, %d distinct", counts.records(), counts.fields(), counts.distinct())));
            StringBuilder top = new StringBuilder();
            for (Map.Entry<String, Long> e : counts.top(8)) {
                top.append(top.length() > 0 ? ", " : "").append(e.getKey()).append('=').append(e.getValue());
            }
            l.add(row("top words", top.toString()));
        }
        l.add(row("sha-256 source", src));
        l.add(row("sha-256 received", dst + (ok ? "  OK, verified" : "  MISMATCH")));
        return l;
    }

    /**
     * The run's throughput as a fraction of the rails' summed shaped capacity over the whole run, first
     * byte to last ({@code "0.93 of the rails' capacity (120 MiB/s shaped)"}), or null when a rail is
     * unshaped (no capacity to compare with).
     */
    static @Nullable String efficiency(long bytes, double seconds, int railCount, java.util.function.IntToLongFunction rateOf) {
        double capacity = 0;
        for (int i = 0; i < railCount; i++) {
            long rate = rateOf.applyAsLong(i);
            if (rate <= 0 || rate == Long.MAX_VALUE) {
                return null;
            }
            capacity += rate;
        }
        if (!(seconds > 0) || capacity == 0) {
            return null;
        }
        return String.format(Locale.ROOT, "%.2f of the rails' capacity (%.0f MiB/s shaped), over the whole run",
            bytes / seconds / capacity, capacity / (1 << 20));
    }

    /**
     * Adds one row per rail (its shaping when {@code rateOf} is given, bytes, share of the bytes) and
     * the shares of the last second.
     */
    static void railRows(List<String> l, long[] railBytes, List<Sampler.Sample> samples, java.util.function.@Nullable IntToLongFunction rateOf) {
        long total = 0;
        for (long b : railBytes) {
            total += b;
        }
        double[] last = lastShares(samples, railBytes.length);
        StringBuilder weights = new StringBuilder();
        for (int i = 0; i < railBytes.length; i++) {
            String shape = "";
            if (rateOf != null) {
                long rate = rateOf.applyAsLong(i);
                shape = String.format(Locale.ROOT, "%-16s ", rate == Long.MAX_VALUE ? "unshaped" : (rate >> 20) + " MiB/s shaped");
            }
            l.add(row("rail " + i, String.format(Locale.ROOT, "%s%10s  %5.1f %% of bytes", shape, mib(railBytes[i]),
                total > 0 ? 100.0 * railBytes[i] / total : 0)));
            weights.append(i > 0 ? " / " : "").append(String.format(Locale.ROOT, "%.2f", last[i]));
        }
        l.add(row("final weights", weights + "  (each rail's share of the bytes in the last second)"));
    }

    /**
     * Starts each scheduler's worker thread now (a no-op task, waited for), so that a timed transfer does not
     * pay for creating them: a {@link Schedulers#newSingle} scheduler creates its thread on its first task.
     */
    static void startThreads(Scheduler... schedulers) {
        for (Scheduler scheduler : schedulers) {
            Mono.fromRunnable(() -> { }).subscribeOn(scheduler).block(Duration.ofSeconds(10));
        }
    }

    /**
     * The {@code --weights-out} log of {@code connection}'s striping weights, or null without
     * {@code --weights-out} ({@link #settings()} checked that {@code policy} has weights).
     */
    static @Nullable WeightLog weightLog(Settings s, ChannelFactory policy, RdmaConnection connection, String what) {
        if (s.weightsOut() == null) {
            return null;
        }
        RailsChannelFactory rails = (RailsChannelFactory) policy;
        return new WeightLog(s.weightsOut(), what + ", policy " + s.policy(), () -> rails.weights(connection));
    }

    /**
     * The summary row with the policy's weights at the end (one share per rail), or null when the
     * policy has none (round robin).
     */
    static @Nullable String weightsRow(ChannelFactory policy, RdmaConnection connection) {
        if (!(policy instanceof RailsChannelFactory rails)) {
            return null;
        }
        double[] w = rails.weights(connection);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < w.length; i++) {
            text.append(i > 0 ? " / " : "").append(String.format(Locale.ROOT, "%.2f", w[i]));
        }
        return row("policy weights", text + "  (the striping policy's share per rail at the end)");
    }

    /** Each rail's share of the bytes completed over the last ~1 s of samples. */
    static double[] lastShares(List<Sampler.Sample> samples, int rails) {
        double[] out = new double[rails];
        if (samples.isEmpty()) {
            return out;
        }
        Sampler.Sample end = samples.get(samples.size() - 1);
        Sampler.Sample start = samples.get(0);
        for (int i = samples.size() - 1; i >= 0; i--) {
            Sampler.Sample c = samples.get(i);
            long sum = 0;
            for (int r = 0; r < rails; r++) {
                sum += end.railBytes()[r] - c.railBytes()[r];
            }
            if (end.timeNs() - c.timeNs() >= 1_000_000_000L && sum > 0) {
                start = c;
                break;
            }
        }
        long sum = 0;
        for (int r = 0; r < rails; r++) {
            sum += end.railBytes()[r] - start.railBytes()[r];
        }
        for (int r = 0; r < rails; r++) {
            out[r] = sum > 0 ? (double) (end.railBytes()[r] - start.railBytes()[r]) / sum : 0;
        }
        return out;
    }

    static String row(String name, String value) {
        return String.format(Locale.ROOT, "  %-17s%s", name, value);
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1 << 20));
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java 17 runtime has SHA-256", e);
        }
    }
}
