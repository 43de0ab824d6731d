package io.rdmaflux.samples;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code rdmaflux soak}: streams verified messages over 2 rails for minutes with rail flaps and RC
 * loss while sampling every resource once a second, and fails if any byte is wrong or any resource
 * series rises ({@link TrendTest}). See {@code --help} and {@code scripts/soak.sh}.
 */
@Command(name = "soak", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
        "Soak: streams messages (sequence number + CRC32C each, sizes 64 B .. --max-message-bytes) over the soft provider's IP fabric, "
            + "one connection per epoch, one random rail flap per epoch and RC frame loss in the soft NIC, and checks every byte.",
        "Samples heap (after System.gc()), registered off-heap bytes, buffers held, threads and open fds every second; "
            + "fails (exit 3) if a byte is wrong or a series rises: least-squares rise over the run's second half > max(10% of its mean, a floor).",
        "Two processes: 'soak --listen HOST:PORT' then 'soak --connect HOST:PORT' (scripts/soak.sh does both); without either, both sides run in this JVM.",
        "--timeout-s bounds the waiting (for the peer, a verdict) on top of the run's own length."})
public final class SoakCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--minutes", paramLabel = "M", description = "How long the sender streams, minutes, rounded to whole epochs (default ${DEFAULT-VALUE}).")
    double minutes = 1;

    @Option(names = "--seconds", paramLabel = "S", description = "How long the sender streams, seconds (overrides --minutes).")
    Double seconds;

    @Option(names = "--epoch-s", paramLabel = "S", description = "One connection's life, seconds, 1..3600 (default ${DEFAULT-VALUE}).")
    double epochS = 10;

    @Option(names = "--rails", paramLabel = "N", description = "Rails, 1..16, when no --addresses are given (default ${DEFAULT-VALUE}).")
    int rails = 2;

    @Option(names = "--max-message-bytes", paramLabel = "B", description = "Largest message, 64..1048576 bytes (default ${DEFAULT-VALUE}; "
        + "above 8192 a message goes by rendezvous).")
    int maxMessageBytes = 16384;

    @Option(names = "--no-flaps", description = "No rail flaps.")
    boolean noFlaps;

    @Option(names = "--max-down-ms", paramLabel = "MS", description = "Longest rail flap, ms, >= 50 (default ${DEFAULT-VALUE}).")
    long maxDownMs = 2000;

    @Option(names = "--rc-loss", paramLabel = "P", description = "RC frames each port drops, probability in [0, 0.5] (default ${DEFAULT-VALUE}).")
    double rcLoss = 0.01;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of message sizes and bytes, flaps and loss (default ${DEFAULT-VALUE}).")
    long seed = 20;

    @Option(names = "--no-gc", description = "Sample the heap as it is, without System.gc() first (noisier).")
    boolean noGc;

    @Option(names = "--report-dir", paramLabel = "DIR", description = "Where the sample CSVs go (default ${DEFAULT-VALUE}).")
    Path reportDir = Path.of("target", "soak");

    @picocli.CommandLine.Mixin
    NetOptions net = new NetOptions();

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        NetOptions.Parsed peer = net.parse(rails, null);
        SoakRun.Config c = config(peer);
        boolean pass;
        if (peer.listen() != null) {
            pass = SoakRun.receive(c, peer.listen(), out, at -> {
                out.println("rdmaflux soak: listening at " + at + "; start 'rdmaflux soak --connect " + at + "' (same options)");
                out.flush();
            });
        } else if (peer.connect() != null) {
            pass = SoakRun.send(c, peer.connect(), out);
        } else {
            pass = SoakRun.both(c, out);
        }
        return pass ? 0 : 3;
    }

    /** @throws UserError naming the option and its range */
    SoakRun.Config config(NetOptions.Parsed peer) {
        double runS = seconds != null ? seconds : minutes * 60;
        if (!(runS >= 1 && runS <= 7 * 86_400)) {
            throw new UserError("the run must last 1 s .. 7 days (--minutes/--seconds) but it was " + runS + " s");
        }
        if (!(epochS >= 1 && epochS <= 3600)) {
            throw new UserError("--epoch-s must be in 1..3600 but it was " + epochS);
        }
        if (rails < 1 || rails > 16) {
            throw new UserError("--rails must be in 1..16 but it was " + rails);
        }
        if (maxMessageBytes < 64 || maxMessageBytes > (1 << 20)) {
            throw new UserError("--max-message-bytes must be in 64..1048576 but it was " + maxMessageBytes);
        }
        if (maxDownMs < 50) {
            throw new UserError("--max-down-ms must be at least 50 but it was " + maxDownMs);
        }
        if (!(rcLoss >= 0 && rcLoss <= 0.5)) {
            throw new UserError("--rc-loss must be in [0, 0.5] but it was " + rcLoss);
        }
        List<String> addrs = peer.addresses() != null ? peer.addresses() : Collections.nCopies(rails, "127.0.0.1");
        return new SoakRun.Config(addrs, (long) (runS * 1e9), (long) (epochS * 1e9), maxMessageBytes, !noFlaps, maxDownMs, rcLoss, seed,
            1000, !noGc, reportDir, peer.timeout().plusMillis((long) (runS * 1000)));
    }
}
