package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Locale;

/**
 * OSU one-sided benchmarks through the connection's one-sided API ({@code RdmaConnection.put/get/fence},
 * seed 002), both ends in this JVM on the mem or net fabric:
 * <ul>
 *   <li>{@code put-bw} / {@code get-bw} (osu_put_bw, osu_get_bw): per iteration, {@code window} puts (or
 *       gets) of one size issued at once, then a {@code fence()} that ends the access epoch (a
 *       synchronization message per subchannel used, and the target's acknowledgement), as OMB's
 *       window of MPI_Put between win_start and win_complete; bandwidth = bytes of the timed
 *       iterations over their time;</li>
 *   <li>{@code put-latency} / {@code get-latency} (osu_put_latency, osu_get_latency with a flush): one put
 *       (or get) of one size until its completion, i.e. until the bytes are in the target's memory (or
 *       here); the table gives the mean, p50 and p99 of each operation's time.</li>
 * </ul>
 * The receiver exposes one region READ_WRITE; the connection splits large transfers over the rails by
 * load balanced fragmentation (the {@code --policy} option applies to the two-process verbs bench
 * only). After the last size it checks the bytes (put: the target region holds the pattern; get: the
 * local one does) and answers exit code 3 on a mismatch.
 */
final class ConnectionOneSidedBench {
    /** RDMA WRITEs/READs each rail may have in flight (the channels' RDMA budget). */
    static final int RDMA_OPS_PER_RAIL = 16;
    static final Duration WAIT = Duration.ofMinutes(5);
    private static final int BUFFER_BYTES = 8 * 1024 + 64;

    private ConnectionOneSidedBench() {
    }

    static int run(BenchCommand.Settings s, PrintWriter out) {
        if (s.peer().listen() != null) {
            return ConnectionOneSidedPeer.serve(s, s.peer().listen(), out);
        }
        boolean latency = BenchCommand.isLatency(s.test());
        int window = latency ? 1 : s.window();
        int regionBytes = regionBytes(s, window);
        if (s.peer().connect() != null) {
            return ConnectionOneSidedPeer.runAgainst(s, s.peer().connect(), out, regionBytes, window, latency);
        }
        try (BenchLink link = openLink(s)) {
            boolean put = isPut(s.test());
            MemoryRegion target = link.receiverNode().registerMemory(ByteBuffer.allocateDirect(regionBytes));
            MemoryRegion local = link.senderNode().registerMemory(ByteBuffer.allocateDirect(regionBytes));
            OneSidedRegion.Pattern.fill(put ? local.buffer() : target.buffer(), regionBytes);
            RemoteRegion remote = exposeToSender(link, target, RemoteAccess.READ_WRITE);
            long extent = measure(s, out, link.sender(), local, remote, regionBytes, window, latency, "");
            return verdict(out, put, OneSidedRegion.Pattern.compare(put ? target.buffer() : local.buffer(), extent), extent);
        }
    }

    /** Bytes of the region both ends use for {@code s}'s sizes and {@code window}. */
    static int regionBytes(BenchCommand.Settings s, int window) {
        long regionBytes = OneSidedRegion.regionBytes(s.sizes(), window);
        if (regionBytes > Integer.MAX_VALUE) {
            throw new UserError("the benchmark region would be " + regionBytes + " bytes; lower --window or the largest --sizes");
        }
        return (int) regionBytes;
    }

    static boolean isPut(BenchCommand.Test t) {
        return t == BenchCommand.Test.put_bw || t == BenchCommand.Test.put_latency;
    }

    /** Prints the verification line; the exit code (3: mismatch). */
    static int verdict(PrintWriter out, boolean put, @Nullable String mismatch, long extent) {
        out.println(mismatch == null
            ? "# verified: the " + extent + " bytes " + (put ? "put into the target" : "got from the target") + " match the pattern"
            : "# VERIFICATION FAILED: " + mismatch);
        out.flush();
        return mismatch == null ? 0 : 3;
    }

    /** What both ends build: RC rails (eager off: one-sided work needs the RC send/receive channel), 8 KiB buffers. */
    static NetRails.Settings netSettings(BenchCommand.Settings s) {
        return new NetRails.Settings(s.addresses(), s.shaped() ? s.railBytesPerSec() : null, BUFFER_BYTES, 64, 1 << 20,
            RDMA_OPS_PER_RAIL, Policies.parse("rr", s.rails())).eager(false).idle(s.idle().strategy());
    }

    /** Both ends in this JVM, eager off (one-sided work needs the RC send/receive channel), as the settings say. */
    static BenchLink openLink(BenchCommand.Settings s) {
        return s.addresses() == null
            ? InJvmRails.open(new InJvmRails.Settings(s.railBytesPerSec(), 0, BUFFER_BYTES, 64, 1 << 20, RDMA_OPS_PER_RAIL,
                Policies.parse("rr", s.rails()), EagerOption.spec(false)).on(s.provider(), "ucx".equals(s.provider()) ? s.fabric() : null))
            : NetPair.open(netSettings(s));
    }

    /** The receiver exposes {@code target} with {@code access}; the sender's handle of it, once it arrived. */
    static RemoteRegion exposeToSender(BenchLink link, MemoryRegion target, RemoteAccess access) {
        link.receiver().expose(target, access).block(WAIT);
        RemoteRegion remote = link.sender().remoteRegions().blockFirst(WAIT);
        if (remote == null) {
            throw new UserError("the receiver's exposed region did not arrive");
        }
        return remote;
    }

    /** {@code s} as the table header shows it for a one-sided run: {@code policy} in place of --policy, eager off. */
    static BenchCommand.Settings shownWithPolicy(BenchCommand.Settings s, String policy) {
        return new BenchCommand.Settings(s.test(), s.fabric(), s.rails(), s.addresses(), s.sizes(), s.schedule(),
            s.window(), s.railBytesPerSec(), s.shaped(), policy, s.peer(), s.json(), false, s.provider(), null, s.layout(), s.idle());
    }

    /**
     * Runs every size of {@code s} from {@code origin} against {@code remote} and prints the table;
     * returns the extent (bytes from offset 0) the timed transfers touched, for the caller's verification.
     */
    static long measure(BenchCommand.Settings s, PrintWriter out, RdmaConnection origin, MemoryRegion local, RemoteRegion remote,
                        int regionBytes, int window, boolean latency, String headerSuffix) {
        boolean put = isPut(s.test());
        // the connection's one-sided engine always fragments load-balanced (seed 002 §3.2): say so, not the --policy
        BenchCommand.Settings shown = shownWithPolicy(s, "load-balanced");
        BenchCommand.header(out, shown, " (RdmaConnection put/get, eager off)" + headerSuffix);
        BenchReport report = BenchReport.of(s, "");
        int maxSize = s.maxSize();
        int slots = Math.max(1, regionBytes / maxSize);
        long extent = 0;
        for (OsuSchedule.Step step : s.schedule().steps(s.sizes(), true)) {
            int size = step.sizeBytes();
            extent = Math.max(extent, (long) Math.min(slots, window) * size);
            if (latency) {
                Histogram h = new Histogram(3);
                for (int it = 0; it < step.warmup() + step.iterations(); it++) {
                    long t0 = System.nanoTime();
                    op(origin, put, local, remote, 0, size).block(WAIT);
                    if (it >= step.warmup()) {
                        h.recordValue(Math.max(1, System.nanoTime() - t0));
                    }
                }
                if (step.printed()) {
                    double mean = h.getMean() / 1000.0;
                    double p50 = h.getValueAtPercentile(50) / 1000.0;
                    double p99 = h.getValueAtPercentile(99) / 1000.0;
                    out.printf(Locale.ROOT, "%-16d%12.2f%12.2f%12.2f%n", size, mean, p50, p99);
                    out.flush();
                    report.latency(step, mean, p50, p99);
                }
            } else {
                long t0 = 0;
                for (int it = 0; it < step.warmup() + step.iterations(); it++) {
                    if (it == step.warmup()) {
                        t0 = System.nanoTime();
                    }
                    Flux.range(0, window)
                        .flatMap(j -> op(origin, put, local, remote, (long) (j % slots) * size, size), window)
                        .then(origin.fence())
                        .block(WAIT);
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                double bps = (double) step.iterations() * window * size / seconds;
                if (step.printed()) {
                    BenchCommand.bandwidthRow(out, size, bps);
                    report.bandwidth(step, bps / 1e6);
                }
            }
        }
        report.write();
        return extent;
    }

    private static Mono<Void> op(RdmaConnection c, boolean put, MemoryRegion local, RemoteRegion remote, long offset, int size) {
        return put ? c.put(local, offset, remote, offset, size) : c.get(local, offset, remote, offset, size);
    }
}
