package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import org.HdrHistogram.Histogram;
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
    private static final Duration WAIT = Duration.ofMinutes(5);

    private ConnectionOneSidedBench() {
    }

    static int run(BenchCommand.Settings s, PrintWriter out) {
        boolean latency = BenchCommand.isLatency(s.test());
        int window = latency ? 1 : s.window();
        long regionBytes = OneSidedBench.regionBytes(s.sizes(), window);
        if (regionBytes > Integer.MAX_VALUE) {
            throw new UserError("the benchmark region would be " + regionBytes + " bytes; lower --window or the largest --sizes");
        }
        try (BenchLink link = openLink(s)) {
            return measure(s, out, link, (int) regionBytes, window, latency);
        }
    }

    /** Both ends in this JVM, eager off (one-sided work needs the RC send/receive channel), as the settings say. */
    static BenchLink openLink(BenchCommand.Settings s) {
        int buffer = 8 * 1024 + 64;
        return s.addresses() == null
            ? InJvmRails.open(new InJvmRails.Settings(s.railBytesPerSec(), 0, buffer, 64, 1 << 20, RDMA_OPS_PER_RAIL,
                Policies.parse("rr", s.rails()), EagerOption.spec(false)).on(s.provider(), "ucx".equals(s.provider()) ? s.fabric() : null))
            : NetPair.open(new NetRails.Settings(s.addresses(), s.shaped() ? s.railBytesPerSec() : null, buffer, 64, 1 << 20,
                RDMA_OPS_PER_RAIL, Policies.parse("rr", s.rails())).eager(false));
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
            s.window(), s.railBytesPerSec(), s.shaped(), policy, s.peer(), s.json(), false, s.provider(), null, s.layout());
    }

    private static int measure(BenchCommand.Settings s, PrintWriter out, BenchLink link, int regionBytes, int window, boolean latency) {
        boolean put = s.test() == BenchCommand.Test.put_bw || s.test() == BenchCommand.Test.put_latency;
        MemoryRegion target = link.receiverNode().registerMemory(ByteBuffer.allocateDirect(regionBytes));
        MemoryRegion local = link.senderNode().registerMemory(ByteBuffer.allocateDirect(regionBytes));
        OneSidedBench.Pattern.fill(put ? local.buffer() : target.buffer(), regionBytes);
        RdmaConnection origin = link.sender();
        RemoteRegion remote = exposeToSender(link, target, RemoteAccess.READ_WRITE);
        // the connection's one-sided engine always fragments load-balanced (seed 002 §3.2): say so, not the --policy
        BenchCommand.Settings shown = shownWithPolicy(s, "load-balanced");
        BenchCommand.header(out, shown, " (RdmaConnection put/get, eager off)");
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
        String mismatch = OneSidedBench.Pattern.compare(put ? target.buffer() : local.buffer(), extent);
        out.println(mismatch == null
            ? "# verified: the " + extent + " bytes " + (put ? "put into the target" : "got from the target") + " match the pattern"
            : "# VERIFICATION FAILED: " + mismatch);
        out.flush();
        return mismatch == null ? 0 : 3;
    }

    private static Mono<Void> op(RdmaConnection c, boolean put, MemoryRegion local, RemoteRegion remote, long offset, int size) {
        return put ? c.put(local, offset, remote, offset, size) : c.get(local, offset, remote, offset, size);
    }
}
