package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.verbs.RdmaProviders;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import reactor.core.publisher.Flux;

import reactor.core.publisher.Sinks;

import java.io.PrintWriter;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * OSU-style micro-benchmarks over an rdmaflux connection (after the OSU Micro-Benchmarks'
 * osu_latency, osu_bw, osu_bibw and osu_mbw_mr): one fresh connection per message size, the
 * familiar {@code # Size  Bandwidth (MB/s)} tables, MB = 10^6 bytes as OSU prints them.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"OSU-style benchmarks: latency (ping-pong, one-way = RTT/2), bw (windowed streaming), "
        + "bibw (both directions at once), msg-rate (messages/s)."})
public final class BenchCommand implements java.util.concurrent.Callable<Integer> {
    enum Test { latency, bw, bibw, msg_rate }

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TEST", description = "latency, bw, bibw or msg-rate.")
    String test;

    @Option(names = "--provider", description = "RDMA provider: soft (default) or another installed one by name.")
    String provider = "soft";

    @Option(names = "--fabric", description = "Fabric of the soft provider: mem (in-JVM; default) or net (IP: RC over TCP, both ends in this JVM on --addresses).")
    String fabric = "mem";

    @Option(names = "--addresses", paramLabel = "IP,IP", description = "With --fabric net: one local IP per rail (the rail count; default 127.0.0.1 for each of --rails).")
    String addresses;

    @Option(names = "--rails", description = "Rails, 1..16 (default ${DEFAULT-VALUE}).")
    int rails = 1;

    @Option(names = "--policy", description = "Scheduling policy: " + Policies.CHOICES + " (default ${DEFAULT-VALUE}).")
    String policy = "adaptive";

    @Option(names = "--sizes", description = "Message sizes: MIN:MAX (powers of two) or a list, with k/m suffixes (default: 1:1m; msg-rate 8).")
    String sizes;

    @Option(names = "--iterations", description = "Iterations per size (default ${DEFAULT-VALUE}; bw/bibw/msg-rate send iterations x window).")
    int iterations = 200;

    @Option(names = "--window", description = "Messages in flight per iteration for bw/bibw/msg-rate (default ${DEFAULT-VALUE}).")
    int window = 64;

    @Option(names = "--rail-rates", split = ",", description = "Bandwidth per rail in MiB/s, 0 = unshaped (default: unshaped).")
    List<Long> railRates;

    @Option(names = "--verbose", description = "Print stack traces of errors.")
    boolean verbose;

    @Override
    public Integer call() {
        Test t = parseTest(test);
        if (!"soft".equals(provider)) {
            // asks the registry, so a missing provider explains itself (e.g. disni: libdisni or device missing)
            RdmaProviders.open(provider).close();
            throw new UserError("--provider " + provider + " is installed, but bench runs both ends in one JVM on the soft provider only");
        }
        if (!"mem".equals(fabric) && !"net".equals(fabric)) {
            throw new UserError("--fabric " + fabric + " is not supported by bench; use --fabric mem (in-JVM) or --fabric net (IP)");
        }
        if (addresses != null && !"net".equals(fabric)) {
            throw new UserError("--addresses applies to --fabric net only");
        }
        List<String> addrs = null;
        if ("net".equals(fabric)) {
            addrs = addresses != null ? NetRails.parseAddresses(addresses) : java.util.Collections.nCopies(Math.max(1, Math.min(rails, 16)), "127.0.0.1");
            rails = addrs.size();
        }
        if (rails < 1 || rails > 16) {
            throw new UserError("--rails must be in 1..16 but it was " + rails);
        }
        if (iterations < 1) {
            throw new UserError("--iterations must be >= 1 but it was " + iterations);
        }
        if (window < 1 || window > 4096) {
            throw new UserError("--window must be in 1..4096 but it was " + window);
        }
        Policies.parse(policy, rails);
        List<Integer> sizeList = parseSizes(sizes != null ? sizes : t == Test.msg_rate ? "8" : "1:1m");
        List<Long> rates = new ArrayList<>();
        for (int i = 0; i < rails; i++) {
            long mibps = railRates == null ? 0 : i < railRates.size() ? railRates.get(i) : -1;
            if (mibps < 0) {
                throw new UserError("--rail-rates gives " + railRates.size() + " rates for " + rails + " rails; give one per rail");
            }
            rates.add(mibps == 0 ? Long.MAX_VALUE : mibps << 20);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.printf(Locale.ROOT, "# rdmaflux %s: provider %s, fabric %s, %d rail(s), policy %s, iterations %d%s%n", test, provider, fabric,
            rails, policy, iterations, t == Test.latency ? "" : ", window " + window);
        switch (t) {
            case latency -> out.println("# Size          Latency (us)    p50 (us)    p99 (us)");
            case bw, bibw -> out.println("# Size      Bandwidth (MB/s)");
            case msg_rate -> out.println("# Size                  MB/s        Messages/s");
        }
        out.flush();
        for (int size : sizeList) {
            int buffer = Math.max(8 * 1024, Math.min(size, 64 * 1024)) + 64;
            int maxMessage = Math.max(size, 1 << 20);
            BenchLink opened = addrs == null
                ? InJvmRails.open(new InJvmRails.Settings(rates, 0, buffer, 64, maxMessage, 4, Policies.parse(policy, rails)))
                : NetPair.open(new NetRails.Settings(addrs, railRates != null ? rates : null, buffer, 64, maxMessage, 4, Policies.parse(policy, rails)));
            try (BenchLink link = opened) {
                switch (t) {
                    case latency -> {
                        Histogram h = latency(link, size);
                        out.printf(Locale.ROOT, "%-16d%12.2f%12.2f%12.2f%n", size, h.getMean() / 2000.0,
                            h.getValueAtPercentile(50) / 2000.0, h.getValueAtPercentile(99) / 2000.0);
                    }
                    case bw -> out.printf(Locale.ROOT, "%-12d%18.2f%n", size, bandwidth(link, size, false) / 1e6);
                    case bibw -> out.printf(Locale.ROOT, "%-12d%18.2f%n", size, bandwidth(link, size, true) / 1e6);
                    case msg_rate -> {
                        double bps = bandwidth(link, size, false);
                        out.printf(Locale.ROOT, "%-12d%18.2f%18.0f%n", size, bps / 1e6, bps / size);
                    }
                }
            }
            out.flush();
        }
        return 0;
    }

    static Test parseTest(String text) {
        return switch (text) {
            case "latency" -> Test.latency;
            case "bw" -> Test.bw;
            case "bibw" -> Test.bibw;
            case "msg-rate", "msg_rate" -> Test.msg_rate;
            case "put-bw", "get-bw" -> throw new UserError(text + " needs one-sided put/get over rails, which the connection API does not expose yet");
            default -> throw new UserError("unknown test '" + text + "'; choose latency, bw, bibw or msg-rate");
        };
    }

    /** Parses {@code MIN:MAX} (powers of two from MIN to MAX) or a comma list; k/m suffixes. */
    static List<Integer> parseSizes(String text) {
        List<Integer> out = new ArrayList<>();
        try {
            if (text.contains(":")) {
                String[] p = text.split(":", -1);
                long lo = bytes(p[0]);
                long hi = bytes(p[1]);
                if (p.length != 2 || lo < 1 || hi < lo) {
                    throw new UserError("--sizes " + text + ": MIN:MAX with 1 <= MIN <= MAX required, e.g. 1:1m");
                }
                for (long s = lo; s <= hi; s *= 2) {
                    out.add((int) s);
                }
            } else {
                for (String p : text.split(",")) {
                    out.add((int) bytes(p));
                }
            }
        } catch (NumberFormatException e) {
            throw new UserError("--sizes " + text + " is not MIN:MAX or a list of sizes; e.g. 1:1m or 8,64,4k");
        }
        for (int s : out) {
            if (s < 1 || s > (64 << 20)) {
                throw new UserError("--sizes values must be in 1..64m but one was " + s);
            }
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
        return Long.parseLong(t) * mult;
    }

    /** Ping-pong: the receiver echoes every message; RTT per iteration in ns (warm-up excluded). */
    private Histogram latency(BenchLink link, int size) {
        int warmup = Math.max(10, iterations / 10);
        int total = warmup + iterations;
        RdmaConnection a = link.sender();
        RdmaConnection b = link.receiver();
        b.send(b.receive()).subscribe(null, e -> { });
        Histogram h = new Histogram(3);
        byte[] payload = new byte[size];
        Sinks.Many<RdmaMessage> out = Sinks.many().unicast().onBackpressureBuffer();
        CountDownLatch done = new CountDownLatch(1);
        AtomicLong sentAt = new AtomicLong();
        AtomicLong count = new AtomicLong();
        a.receive().subscribe(m -> {
            m.release();
            long rtt = System.nanoTime() - sentAt.get();
            long n = count.incrementAndGet();
            if (n > warmup) {
                h.recordValue(rtt);
            }
            if (n < total) {
                sentAt.set(System.nanoTime());
                out.tryEmitNext(RdmaMessage.of(payload));
            } else {
                done.countDown();
            }
        }, e -> done.countDown());
        a.send(out.asFlux()).subscribe(null, e -> done.countDown());
        sentAt.set(System.nanoTime());
        out.tryEmitNext(RdmaMessage.of(payload));
        await(done, "latency at " + size + " bytes");
        return h;
    }

    /** Streams iterations x window messages (both ways for bibw); bytes/s received. */
    private double bandwidth(BenchLink link, int size, boolean both) {
        long messages = (long) iterations * window;
        byte[] payload = new byte[size];
        List<RdmaConnection> senders = both ? List.of(link.sender(), link.receiver()) : List.of(link.sender());
        List<RdmaConnection> receivers = both ? List.of(link.receiver(), link.sender()) : List.of(link.receiver());
        CountDownLatch done = new CountDownLatch(receivers.size());
        for (RdmaConnection r : receivers) {
            AtomicLong got = new AtomicLong();
            r.receive().subscribe(m -> {
                m.release();
                if (got.incrementAndGet() == messages) {
                    done.countDown();
                }
            }, e -> done.countDown());
        }
        long t0 = System.nanoTime();
        for (RdmaConnection s : senders) {
            s.send(Flux.range(0, (int) messages).map(i -> RdmaMessage.of(payload))).subscribe(null, e -> done.countDown());
        }
        await(done, (both ? "bibw" : "bw") + " at " + size + " bytes");
        double seconds = (System.nanoTime() - t0) / 1e9;
        return senders.size() * messages * (double) size / seconds;
    }

    private static void await(CountDownLatch latch, String what) {
        try {
            if (!latch.await(5, TimeUnit.MINUTES)) {
                throw new UserError(what + " did not finish within 5 minutes");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UserError(what + " was interrupted");
        }
    }

}
