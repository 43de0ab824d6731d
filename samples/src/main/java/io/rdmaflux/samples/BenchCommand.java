package io.rdmaflux.samples;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.verbs.RdmaProviders;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * OSU-style micro-benchmarks over rdmaflux (after the OSU Micro-Benchmarks' osu_latency, osu_bw,
 * osu_bibw, osu_mbw_mr, osu_put_bw and osu_get_bw), printing the familiar
 * {@code # Size  Bandwidth (MB/s)} tables with MB = 10^6 bytes as OSU prints them.
 *
 * <p>Two-sided tests run over an {@link io.rdmaflux.core.RdmaConnection} with {@link BenchSession};
 * one-sided tests (put-bw, get-bw, put-latency, get-latency) run through the connection's one-sided API
 * ({@code expose}, {@code put}/{@code get}/{@code fence}) with {@link ConnectionOneSidedBench} and, between
 * two processes, {@link ConnectionOneSidedPeer}. Both ends run in this JVM (a fresh connection per size, on the in-JVM mem
 * fabric or the IP fabric), or in two processes: one {@code --listen}s and serves one run, the
 * other {@code --connect}s, measures and prints.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"OSU-style benchmarks: latency (ping-pong, one-way = RTT/2), bw (windowed streaming), "
        + "bibw (both directions at once), msg-rate (messages/s), put-bw (RDMA WRITE), get-bw (RDMA READ), put-get-bw (not OSU: puts and gets outstanding at once vs each alone), put-latency and get-latency (one put or get until it completed), "
        + "fop-latency and cas-latency (one 8-byte fetch-and-add or compare-and-swap until it returned).",
        "Both ends run in this JVM, or in two processes: 'bench TEST --listen HOST:PORT' on one side serves one run and exits, "
            + "'bench TEST --connect HOST:PORT' on the other measures and prints the table."})
public final class BenchCommand implements java.util.concurrent.Callable<Integer> {
    enum Test { latency, bw, bibw, msg_rate, put_bw, get_bw, put_latency, get_latency, fop_latency, cas_latency, put_get_bw }

    /** What each in-JVM size may take before the run gives up. */
    private static final Duration IN_JVM_SIZE_TIMEOUT = Duration.ofMinutes(5);
    /** The smallest largest-message of a two-process end: one receive buffer. */
    private static final int PEER_MIN_MESSAGE_BYTES = 64 << 10;
    static final String TESTS = "latency, bw, bibw, msg-rate, put-bw, get-bw, put-get-bw, put-latency, get-latency, fop-latency or cas-latency";

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TEST", description = "latency, bw, bibw, msg-rate, put-bw, get-bw, put-get-bw, put-latency, get-latency, fop-latency or cas-latency.")
    String test;

    @Option(names = "--provider", description = "RDMA provider: soft (default) or ucx (UCX via JUCX: both ends in this JVM, or two "
        + "processes with --listen/--connect through its TCP connection manager; needs the system's UCX library, e.g. apt-get install libucx0).")
    String provider = "soft";

    @Option(names = "--fabric", description = "Fabric of the soft provider: mem (in-JVM; default) or net (IP: RC over TCP; "
        + "both ends in this JVM on --addresses, or in two processes with --listen/--connect, which imply net). "
        + "Of the ucx provider: sm (UCX shared memory; default in one JVM) or tcp (UCX over TCP; default with --listen/--connect).")
    @Nullable String fabric;

    @Option(names = "--rails", paramLabel = "N|DEV:PORT,..", description = RailsOption.HELP + " (default 1; with --addresses: one per address).")
    @Nullable String railsOption;

    @Option(names = "--devices", paramLabel = "N", description = RailsOption.DEVICES_HELP + ".")
    @Nullable Integer devices;

    /** The rail count of {@code --rails}, or null: not given. */
    @Nullable Integer rails;

    @Option(names = "--policy", description = "Scheduling policy: " + Policies.CHOICES + "; put-bw/get-bw also load-balanced (default ${DEFAULT-VALUE}).")
    String policy = "adaptive";

    @Option(names = "--sizes", description = "Message sizes: MIN:MAX (powers of two) or a list, with k/m suffixes (default: 1:1m; msg-rate 8). "
        + "A --listen side accepts messages up to its largest size (default 1m).")
    @Nullable String sizes;

    @Option(names = {"-i", "--iterations"}, paramLabel = "N", description = "Timed iterations per size (default OSU's by size: latency 10000 up to 8 KiB, "
        + "1000 above; bw/bibw/msg-rate/put-bw/get-bw 100 windows up to 8 KiB, 20 above). The --connect side's value rules.")
    @Nullable Integer iterations;

    @Option(names = {"-x", "--warmup"}, paramLabel = "N", description = "Skipped iterations per size before the timed ones, 0..1000000 "
        + "(default OSU's by size: latency 100 up to 8 KiB, 10 above; streaming 10 windows, 2 above). The --connect side's value rules.")
    @Nullable Integer warmup;

    @Option(names = "--jit-warmup", paramLabel = "N", description = "Iterations at the first size before the table, not printed, so the first rows "
        + "do not measure the JVM's JIT compiler, 0..1000000 (default: latency 10000 ping-pongs, streaming 100 windows; 0 for none).")
    @Nullable Integer jitWarmup;

    @Option(names = {"-W", "--window"}, description = "Messages in flight per iteration for bw/bibw/msg-rate/put-bw/get-bw, 1..4096 (default ${DEFAULT-VALUE}, OSU's).")
    int window = OsuSchedule.DEFAULT_WINDOW;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the table as JSON to FILE (settings and one object per size).")
    java.nio.file.@Nullable Path json;

    @Option(names = "--rail-rates", split = ",", description = "Bandwidth per rail in MiB/s, 0 = unshaped (default: unshaped).")
    @Nullable List<Long> railRates;

    @Option(names = "--eager", paramLabel = "on|off", description = "The eager RDMA ring for small messages (seed 001 §4; "
        + "default on, or what --transport implies): off runs every message over send/receive. With --transport it must agree: "
        + "on needs an eager rail, off allows none.")
    @Nullable String eager;

    @Option(names = "--transport", paramLabel = "rc|eager|ud|rc-dr", description = "Two-sided tests: the channel kind of every rail, or a comma list of one per rail, "
        + "insisted on: rc = RC send/receive, eager = eager RDMA ring over RC (seed 001 §4), ud = reliable UD (seed 003 §4, module "
        + "ud-reliable), rc-dr = RC checked end to end by DR (CRC32C + acknowledgement, seed 003 §3.1). Default: eager where both nodes offer it, else rc (as --eager says).")
    @Nullable String transport;

    @picocli.CommandLine.Mixin
    NetOptions net = new NetOptions();

    @Option(names = "--idle", paramLabel = "low-latency|backoff", description = "How a node's progress thread idles on the IP fabric "
        + "(--fabric net, --listen/--connect): low-latency (default; polls some 100 µs after the last message, as MPI libraries poll, "
        + "so a reply finds it awake) or backoff (the library's default: blocks in the socket selector after a few empty cycles).")
    @Nullable String idle;

    @Option(names = "--nic-threads", paramLabel = "one|per-device", description = "In-JVM soft run: the soft NICs' engines on one "
        + "thread (one, the default) or each NIC on a thread of its own (per-device: seed 004's offload of chunk submission to "
        + "idle cores; pays only when cores are idle).")
    @Nullable String nicThreads;

    @Option(names = "--verbose", description = "Print stack traces of errors.")
    boolean verbose;

    /** Validated settings: what every mode needs. */
    record Settings(Test test, String fabric, int rails, @Nullable List<String> addresses, List<Integer> sizes, OsuSchedule schedule,
                    int window, List<Long> railBytesPerSec, boolean shaped, String policy, NetOptions.Parsed peer, java.nio.file.@Nullable Path json,
                    boolean eager, String provider, @Nullable List<ChannelKind> kinds, @Nullable SoftRailLayout layout, IdleOption idle) {
        int maxSize() {
            return sizes.stream().mapToInt(Integer::intValue).max().orElse(1);
        }
    }

    @Override
    public Integer call() {
        Settings s = settings();
        PrintWriter out = spec.commandLine().getOut();
        if (atomic(s.test)) {
            return AtomicLatencyBench.run(s, out);
        }
        if (s.test == Test.put_get_bw) {
            return PutGetBench.run(s, out);
        }
        if (oneSided(s.test)) {
            // through the connection's one-sided API, in this JVM or between two processes (ConnectionOneSidedPeer)
            return ConnectionOneSidedBench.run(s, out);
        }
        if (s.peer.listen() != null) {
            return serve(s, s.peer.listen(), out);
        }
        if (s.peer.connect() != null) {
            return runAgainst(s, s.peer.connect(), out);
        }
        return runInJvm(s, out);
    }

    Settings settings() {
        Test t = parseTest(test);
        boolean ucx = "ucx".equals(provider);
        if (!"soft".equals(provider) && !ucx) {
            // asks the registry, so a missing provider explains itself (e.g. disni: libdisni or device missing)
            RdmaProviders.open(provider).close();
            throw new UserError("--provider " + provider + " is installed, but bench runs on the soft and ucx providers only");
        }
        if (ucx) {
            checkUcx(t);
        } else if (fabric != null && !"mem".equals(fabric) && !"net".equals(fabric)) {
            throw new UserError("--fabric " + fabric + " is not supported by bench; use --fabric mem (in-JVM) or --fabric net (IP)");
        }
        RailsOption.Parsed railsParsed = RailsOption.parse(railsOption, devices, 1);
        rails = railsOption != null ? railsParsed.count() : null;
        NetOptions.Parsed peer = net.parse(rails != null ? rails : 1, null);
        if (peer.peerMode() && "mem".equals(fabric)) {
            throw new UserError("--listen/--connect run over the IP fabric; drop --fabric mem (or use --fabric net)");
        }
        String fab = ucx ? ucxFabric(fabric, peer.peerMode()) : fabric != null ? fabric : peer.peerMode() ? "net" : "mem";
        railsParsed.requireOneDevice(ucx, "--provider ucx").requireOneDevice("net".equals(fab), "--fabric net or --listen/--connect")
            .requireOneDevice(oneSided(t), name(t) + " (one-sided RDMA uses one device's registrations)");
        if (net.addresses != null && "mem".equals(fab)) {
            throw new UserError("--addresses applies to --fabric net and --listen/--connect only (the in-JVM mem fabric needs no addresses)");
        }
        List<String> addrs = null;
        int railCount = rails != null ? rails : 1;
        if ("net".equals(fab)) {
            addrs = peer.addresses() != null ? peer.addresses() : Collections.nCopies(railCount, "127.0.0.1");
            if (rails != null && rails != addrs.size()) {
                throw new UserError("--rails " + rails + " disagrees with --addresses " + net.addresses + " (" + addrs.size()
                    + " rails); give one address per rail, or drop --rails");
            }
            railCount = addrs.size();
        } else if (ucx && peer.peerMode()) {
            addrs = peer.addresses(); // 127.0.0.1 per rail: counts the rails (UCX picks its interfaces)
            railCount = addrs.size();
        }
        if (iterations != null && iterations < 1) {
            throw new UserError("--iterations must be >= 1 but it was " + iterations);
        }
        if (window < 1 || window > 4096) {
            throw new UserError("--window must be in 1..4096 but it was " + window);
        }
        if (t != Test.latency && iterations != null && (long) iterations * window > Integer.MAX_VALUE) {
            throw new UserError("--iterations " + iterations + " x --window " + window + " is more than " + Integer.MAX_VALUE
                + " messages per size; lower --iterations");
        }
        if (warmup != null && (warmup < 0 || warmup > 1_000_000)) {
            throw new UserError("--warmup must be in 0..1000000 but it was " + warmup);
        }
        if (jitWarmup != null && (jitWarmup < 0 || jitWarmup > 1_000_000)) {
            throw new UserError("--jit-warmup must be in 0..1000000 but it was " + jitWarmup);
        }
        if (iterations != null && (long) iterations + (warmup != null ? warmup : 0) > Integer.MAX_VALUE) {
            throw new UserError("--iterations " + iterations + " + --warmup " + warmup + " is more than " + Integer.MAX_VALUE + " iterations; lower --iterations");
        }
        if (json != null && (json.getParent() != null && !java.nio.file.Files.isDirectory(json.getParent()))) {
            throw new UserError("--json " + json + ": the directory " + json.getParent() + " does not exist; create it or write elsewhere");
        }
        if ((t == Test.put_get_bw || atomic(t)) && peer.peerMode()) {
            throw new UserError(name(t) + " runs both ends in this JVM (--fabric mem or net); drop --listen/--connect");
        }
        if (oneSided(t)) {
            Policies.oneSided(policy, railCount);
        } else {
            Policies.parse(policy, railCount);
        }
        List<Integer> sizeList = parseSizes(sizes != null ? sizes : t == Test.msg_rate || atomic(t) ? "8" : "1:1m");
        if (atomic(t) && !sizeList.equals(List.of(8))) {
            throw new UserError(name(t) + " measures 8-byte atomics only (verbs atomics act on one 64-bit word); drop --sizes " + sizes
                + " or give --sizes 8");
        }
        if (railRates != null && railRates.size() != railCount) {
            throw new UserError("--rail-rates gives " + railRates.size() + " rates for " + railCount + " rails; give one per rail");
        }
        List<Long> rates = new ArrayList<>();
        for (int i = 0; i < railCount; i++) {
            long mibps = railRates == null ? 0 : railRates.get(i);
            if (mibps < 0 || mibps > 1_000_000) {
                throw new UserError("--rail-rates values must be in 0..1000000 MiB/s (0 = unshaped) but one was " + mibps);
            }
            rates.add(mibps == 0 ? Long.MAX_VALUE : mibps << 20);
        }
        OsuSchedule schedule = new OsuSchedule(t, iterations, warmup, jitWarmup != null ? jitWarmup : OsuSchedule.defaultJitWarmup(t));
        if (oneSided(t) && transport != null) {
            throw new UserError("--transport applies to the two-sided tests (latency, bw, bibw, msg-rate), not " + name(t)
                + ", which uses RDMA WRITE/READ on RC queue pairs; drop --transport " + transport);
        }
        TransportOption.Choice kinds = TransportOption.parse(transport, eager, railCount);
        SoftRailLayout layout = railsParsed.layout();
        if (nicThreads != null) {
            boolean per = switch (nicThreads) {
                case "one" -> false;
                case "per-device" -> true;
                default -> throw new UserError("--nic-threads must be one or per-device but it was '" + nicThreads + "'");
            };
            if (ucx || !"mem".equals(fab)) {
                throw new UserError("--nic-threads applies to the in-JVM soft run (--fabric mem) only; drop --nic-threads " + nicThreads);
            }
            layout = (layout != null ? layout : SoftRailLayout.ofCount(railCount, 1)).nicThreadPerDevice(per);
        }
        return new Settings(t, fab, railCount, addrs, sizeList, schedule, window, rates, railRates != null, policy, peer, json,
            kinds.eager(), ucx ? "ucx" : "soft", kinds.kinds(), layout, IdleOption.parse(idle));
    }

    /** The ucx provider's fabric: {@code --fabric}, else sm in one JVM and tcp between processes. */
    static String ucxFabric(@Nullable String fabric, boolean peerMode) {
        return fabric != null ? fabric.toLowerCase(Locale.ROOT) : peerMode ? "tcp" : "sm";
    }

    /**
     * {@code --provider ucx}: both ends in this JVM on two ucx providers over UCX shared memory or tcp
     * ({@link InJvmNics}), or two processes through the ucx provider's TCP connection manager
     * ({@link NetRails} with {@code ucxTls}); the options that need the soft provider are refused by name.
     */
    private void checkUcx(Test t) {
        if (oneSided(t) && (net.listen != null || net.connect != null)) {
            throw new UserError(name(t) + " between two processes builds its queue pairs on the soft provider; drop --provider ucx "
                + "(in one JVM it runs on ucx through the connection's put/get)");
        }
        if (net.addresses != null) {
            throw new UserError("--provider ucx takes no --addresses: UCX picks its interfaces itself (UCX_NET_DEVICES narrows them); "
                + "give the rail count with --rails");
        }
        if (railRates != null) {
            throw new UserError("the ucx provider's rails cannot be shaped; drop --rail-rates (or use --provider soft)");
        }
        InJvmNics.ucxTls(fabric); // names a bad --fabric
    }

    /** The table's first lines: what runs where, and the column heads. */
    static void header(PrintWriter out, Settings s, String where) {
        out.printf(Locale.ROOT, "# rdmaflux %s: provider %s, fabric %s, %s, policy %s, %s%s%s%s%n", name(s.test), s.provider, s.fabric,
            s.layout == null ? s.rails + " rail(s)" : s.rails + " rail(s) on " + s.layout.describe(), s.policy + (s.kinds == null ? "" : ", transport " + TransportOption.describe(s.kinds)), s.schedule.describe(),
            isLatency(s.test) ? "" : ", window " + s.window, "net".equals(s.fabric) ? ", idle " + s.idle : "", where);
        switch (s.test) {
            case latency, put_latency, get_latency, fop_latency, cas_latency -> out.println("# Size          Latency (us)    p50 (us)    p99 (us)");
            case bw, bibw, put_bw, get_bw -> out.println("# Size      Bandwidth (MB/s)");
            case put_get_bw -> out.println(PutGetBench.COLUMNS);
            case msg_rate -> out.println("# Size                  MB/s        Messages/s");
        }
        out.flush();
    }

    /**
     * Runs step {@code stepIndex} with {@code client} (its skipped iterations, then its timed ones) and,
     * when it is a printed step, prints its row and adds it to {@code report}.
     */
    private static void measure(PrintWriter out, Settings s, BenchSession.Client client, int stepIndex, OsuSchedule.Step step, BenchReport report,
                                long deadlineNs) {
        int size = step.sizeBytes();
        switch (s.test) {
            case latency -> {
                Histogram h = client.latency(size, step.warmup(), step.iterations(), deadlineNs);
                if (step.printed()) {
                    double mean = h.getMean() / 2000.0;
                    double p50 = h.getValueAtPercentile(50) / 2000.0;
                    double p99 = h.getValueAtPercentile(99) / 2000.0;
                    out.printf(Locale.ROOT, "%-16d%12.2f%12.2f%12.2f%n", size, mean, p50, p99);
                    report.latency(step, mean, p50, p99);
                }
            }
            case bw, bibw, msg_rate -> {
                boolean both = s.test == Test.bibw;
                if (step.warmup() > 0) {
                    client.bandwidth(stepIndex, size, (long) step.warmup() * s.window, both, deadlineNs);
                }
                double bps = client.bandwidth(stepIndex, size, (long) step.iterations() * s.window, both, deadlineNs);
                if (!step.printed()) {
                    break;
                }
                if (s.test == Test.msg_rate) {
                    out.printf(Locale.ROOT, "%-12d%18.2f%18.0f%n", size, bps / 1e6, bps / size);
                    report.messageRate(step, bps / 1e6, bps / size);
                } else {
                    bandwidthRow(out, size, bps);
                    report.bandwidth(step, bps / 1e6);
                }
            }
            default -> throw new IllegalStateException(s.test + " is one-sided");
        }
        out.flush();
    }

    /**
     * With two or more rails, a comment line after a size's row: each rail's share of the payload
     * bytes this side sent during that size (its messages and, for latency, its pings), and the
     * striping weights of its policy after it, e.g.
     * {@code # rails: sent 50.0 % / 50.0 % of 40.0 MiB, weights 0.50 / 0.50}.
     */
    private static void railsLine(PrintWriter out, NetRails link, long[] before) {
        if (link.rails() < 2) {
            return;
        }
        long[] after = link.railBytes();
        long total = 0;
        for (int i = 0; i < after.length; i++) {
            total += after[i] - (i < before.length ? before[i] : 0);
        }
        StringBuilder line = new StringBuilder("# rails: sent ");
        for (int i = 0; i < after.length; i++) {
            long sent = after[i] - (i < before.length ? before[i] : 0);
            line.append(i > 0 ? " / " : "").append(String.format(Locale.ROOT, "%.1f %%", total > 0 ? 100.0 * sent / total : 0));
        }
        line.append(String.format(Locale.ROOT, " of %.1f MiB", total / (double) (1 << 20)));
        double[] w = link.weights();
        if (w != null) {
            line.append(", weights ");
            for (int i = 0; i < w.length; i++) {
                line.append(i > 0 ? " / " : "").append(String.format(Locale.ROOT, "%.2f", w[i]));
            }
        }
        out.println(line);
        out.flush();
    }

    static void bandwidthRow(PrintWriter out, int size, double bytesPerSec) {
        out.printf(Locale.ROOT, "%-12d%18.2f%n", size, bytesPerSec / 1e6);
        out.flush();
    }

    private static BenchWire.Hello hello(Settings s, List<OsuSchedule.Step> steps) {
        return new BenchWire.Hello(s.test, s.window, steps);
    }

    /** Both ends in this JVM: a fresh connection per size, buffers sized to it. */
    private int runInJvm(Settings s, PrintWriter out) {
        header(out, s, "");
        BenchReport report = BenchReport.of(s, "");
        for (int i = 0; i < s.sizes.size(); i++) {
            int size = s.sizes.get(i);
            // a fresh connection per size; the JIT warm-up runs on the first one only
            List<OsuSchedule.Step> steps = s.schedule.steps(List.of(size), i == 0);
            int buffer = Math.max(8 * 1024, Math.min(size, 64 * 1024)) + 64;
            int maxMessage = Math.max(size, 1 << 20);
            BenchLink opened = s.addresses == null
                ? InJvmRails.open(new InJvmRails.Settings(s.railBytesPerSec, 0, buffer, 64, maxMessage, 4, Policies.parse(s.policy, s.rails),
                    EagerOption.spec(s.eager)).on(s.provider, "ucx".equals(s.provider) ? s.fabric : null).channelKinds(s.kinds).layout(s.layout))
                : NetPair.open(new NetRails.Settings(s.addresses, s.shaped ? s.railBytesPerSec : null, buffer, 64, maxMessage, 4,
                    Policies.parse(s.policy, s.rails)).eager(s.eager).channelKinds(s.kinds).idle(s.idle.strategy()));
            long deadlineNs = System.nanoTime() + IN_JVM_SIZE_TIMEOUT.toNanos();
            try (BenchLink link = opened;
                 BenchSession.Server server = new BenchSession.Server(link.receiver(), s.test, size);
                 BenchSession.Client client = new BenchSession.Client(link.sender(), "the in-JVM receiver")) {
                client.hello(hello(s, steps), deadlineNs);
                for (int step = 0; step < steps.size(); step++) {
                    measure(out, s, client, step, steps.get(step), report, deadlineNs);
                }
                client.finish();
                Deadlines.await(server.done(), deadlineNs, "the in-JVM receiver");
            }
        }
        report.write();
        return 0;
    }

    /** Two processes, the settings both ends build their rails with. */
    private static NetRails.Settings peerRails(Settings s, int maxMessage) {
        return new NetRails.Settings(s.addresses, s.shaped ? s.railBytesPerSec : null, (64 << 10) + 64, 64, Math.max(maxMessage, PEER_MIN_MESSAGE_BYTES), 4,
            Policies.parse(s.policy, s.rails)).eager(s.eager).ucx("ucx".equals(s.provider) ? InJvmNics.ucxTls(s.fabric) : null)
            .channelKinds(s.kinds).idle(s.idle.strategy());
    }

    /** The listening side: serves one run for the peer that connects, then exits. */
    private int serve(Settings s, NetRails.HostPort at, PrintWriter out) {
        long deadlineNs = System.nanoTime() + s.peer.timeout().toNanos();
        // without --sizes a listener accepts what the default sizes of any test need
        int accepts = sizes != null ? s.maxSize() : 1 << 20;
        try (NetRails link = NetRails.listen(peerRails(s, accepts), at, s.peer.timeout(), bound -> {
            out.println("rdmaflux bench " + name(s.test) + ": listening at " + bound + " (rails on " + String.join(",", s.addresses)
                + "); serving one run for a peer (bench " + name(s.test) + " --connect " + bound + "), up to " + s.peer.timeout().toSeconds() + " s");
            out.flush();
        })) {
            BenchWire.Hello h;
            try (BenchSession.Server server = new BenchSession.Server(link.connection(), s.test, Math.max(accepts, PEER_MIN_MESSAGE_BYTES))) {
                h = Deadlines.await(server.done(), deadlineNs, "the run with the peer");
            } catch (RuntimeException e) {
                // lets a REJECT reach the peer before the connection goes
                link.closeGracefully(Duration.ofSeconds(5));
                throw e;
            }
            out.printf(Locale.ROOT, "rdmaflux bench %s: served %d size(s) (%d..%d bytes), %s iterations%s over %s%n", name(h.test()), h.sizes().size(),
                h.sizes().stream().mapToInt(Integer::intValue).min().orElse(0), h.sizes().stream().mapToInt(Integer::intValue).max().orElse(0),
                iterationsServed(h), h.test() == Test.latency ? "" : " x window " + h.window(), link.describe());
            out.flush();
            link.closeGracefully(Duration.ofSeconds(10));
        }
        return 0;
    }

    /** The connecting side: measures every size against the listening peer and prints the table. */
    private int runAgainst(Settings s, NetRails.HostPort to, PrintWriter out) {
        long deadlineNs = System.nanoTime() + s.peer.timeout().toNanos();
        try (NetRails link = NetRails.connect(peerRails(s, s.maxSize()), to, Duration.ofSeconds(Math.min(30, s.peer.timeout().toSeconds())),
            "rdmaflux bench " + name(s.test))) {
            try {
                if (link.connection().maxMessageBytes() < s.maxSize()) {
                    throw new UserError("the listener at " + to + " accepts messages up to " + link.connection().maxMessageBytes()
                        + " bytes but --sizes goes to " + s.maxSize() + "; start it with --sizes up to at least " + s.maxSize());
                }
                header(out, s, ", peer " + to);
                BenchReport report = BenchReport.of(s, to.toString());
                List<OsuSchedule.Step> steps = s.schedule.steps(s.sizes, true);
                try (BenchSession.Client client = new BenchSession.Client(link.connection(), to.toString())) {
                    client.hello(hello(s, steps), deadlineNs);
                    for (int i = 0; i < steps.size(); i++) {
                        long[] before = link.railBytes();
                        measure(out, s, client, i, steps.get(i), report, deadlineNs);
                        if (steps.get(i).printed()) {
                            railsLine(out, link, before);
                        }
                    }
                    client.finish();
                }
                report.write();
            } catch (RuntimeException e) {
                // the listener learns the run ended from a graceful close rather than a transport error
                link.closeGracefully(Duration.ofSeconds(5));
                throw e;
            }
            link.closeGracefully(Duration.ofSeconds(10));
        }
        return 0;
    }

    /** The served line's iterations: one count when every size had it, else the counts by size. */
    private static String iterationsServed(BenchWire.Hello h) {
        List<Integer> counts = h.steps().stream().filter(OsuSchedule.Step::printed).map(OsuSchedule.Step::iterations).distinct().toList();
        return counts.size() == 1 ? counts.get(0).toString()
            : counts.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining("/")) + " (by size)";
    }

    /** Whether {@code t} measures latency (one operation at a time). */
    static boolean isLatency(Test t) {
        return t == Test.latency || t == Test.put_latency || t == Test.get_latency || atomic(t);
    }

    /** Whether {@code t} is a one-sided atomic test (fop-latency, cas-latency). */
    static boolean atomic(Test t) {
        return t == Test.fop_latency || t == Test.cas_latency;
    }

    /** Whether {@code t} is a one-sided test (put/get bandwidth, put+get bandwidth, or latency). */
    static boolean oneSided(Test t) {
        return t == Test.put_bw || t == Test.get_bw || t == Test.put_get_bw || t == Test.put_latency || t == Test.get_latency || atomic(t);
    }

    /** The test's name on the command line. */
    static String name(Test t) {
        return t.name().replace('_', '-');
    }

    static Test parseTest(String text) {
        return switch (text) {
            case "latency" -> Test.latency;
            case "bw" -> Test.bw;
            case "bibw" -> Test.bibw;
            case "msg-rate", "msg_rate" -> Test.msg_rate;
            case "put-bw", "put_bw" -> Test.put_bw;
            case "get-bw", "get_bw" -> Test.get_bw;
            case "put-get-bw", "put_get_bw" -> Test.put_get_bw;
            case "put-latency", "put_latency" -> Test.put_latency;
            case "get-latency", "get_latency" -> Test.get_latency;
            case "fop-latency", "fop_latency" -> Test.fop_latency;
            case "cas-latency", "cas_latency" -> Test.cas_latency;
            default -> throw new UserError("unknown test '" + text + "'; choose " + TESTS);
        };
    }

    /** Parses {@code MIN:MAX} (powers of two from MIN to MAX) or a comma list; k/m suffixes; each size in 1..64m. */
    static List<Integer> parseSizes(String text) {
        List<Long> sizes = new ArrayList<>();
        try {
            if (text.contains(":")) {
                String[] p = text.split(":", -1);
                long lo = p.length == 2 ? bytes(p[0]) : 0;
                long hi = p.length == 2 ? bytes(p[1]) : 0;
                if (p.length != 2 || lo < 1 || hi < lo) {
                    throw new UserError("--sizes " + text + ": MIN:MAX with 1 <= MIN <= MAX required, e.g. 1:1m");
                }
                for (long s = lo; s <= Math.min(hi, 1L << 40); s *= 2) {
                    sizes.add(s);
                }
            } else {
                for (String p : text.split(",", -1)) {
                    sizes.add(bytes(p));
                }
            }
        } catch (NumberFormatException | ArithmeticException e) {
            throw new UserError("--sizes " + text + " is not MIN:MAX or a list of sizes; e.g. 1:1m or 8,64,4k");
        }
        if (sizes.size() > BenchWire.MAX_SIZES) {
            throw new UserError("--sizes " + text + " lists " + sizes.size() + " sizes; at most " + BenchWire.MAX_SIZES);
        }
        List<Integer> out = new ArrayList<>();
        for (long s : sizes) {
            if (s < 1 || s > (64 << 20)) {
                throw new UserError("--sizes values must be in 1..64m but one was " + s);
            }
            out.add((int) s);
        }
        return out;
    }

    private static long bytes(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        long mult = 1;
        if (t.endsWith("k")) {
            mult = 1024;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            mult = 1 << 20;
            t = t.substring(0, t.length() - 1);
        }
        return Math.multiplyExact(Long.parseLong(t), mult);
    }
}
