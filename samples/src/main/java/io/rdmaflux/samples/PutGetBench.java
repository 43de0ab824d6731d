package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Locale;

/**
 * {@code put-get-bw}: puts and gets outstanding at once against each alone, through the connection's
 * one-sided API ({@code RdmaConnection.put/get/fence}), both ends in this JVM on the mem or net fabric.
 * Not an OSU test (OMB has none): it measures seed 002 &sect;4.3 (its One Sided Interleaving Test), where interleaving
 * the put and get queues gains because an RDMA WRITE loads the origin's outbound link direction and an
 * RDMA READ's response the inbound one.
 *
 * <p>Every iteration runs three timed windows, in an order that rotates by iteration so that none always
 * goes first: {@code window} puts, then a {@code fence()}; {@code window} gets, then a fence; {@code window}
 * puts and {@code window} gets issued alternately (all {@code 2 x window} outstanding at once), then a fence.
 * Each column is the bytes of its windows over their time; {@code gain} is put+get over the faster of put
 * and get alone (2.00 if the two directions were fully independent and each alone filled its link;
 * 1.00 if they share one budget). Interleaving the windows of one run makes the ratio robust to the
 * machine's load drifting.
 *
 * <p>The receiver exposes one region READ_WRITE: its first half takes the puts, its second half (the
 * pattern) serves the gets; the origin's region likewise (the pattern for the puts in its first half, the
 * gets land in its second half). After the last size both halves that received bytes are checked against
 * the pattern (exit code 3 on a mismatch).
 */
final class PutGetBench {
    static final String COLUMNS = "# Size          put (MB/s)      get (MB/s)  put+get (MB/s)      gain";
    private static final Duration WAIT = Duration.ofMinutes(5);

    private PutGetBench() {
    }

    static int run(BenchCommand.Settings s, PrintWriter out) {
        long half = OneSidedRegion.regionBytes(s.sizes(), s.window());
        if (2 * half > Integer.MAX_VALUE) {
            throw new UserError("the benchmark region would be " + 2 * half + " bytes; lower --window or the largest --sizes");
        }
        try (BenchLink link = ConnectionOneSidedBench.openLink(s)) {
            return measure(s, out, link, (int) half);
        }
    }

    private static int measure(BenchCommand.Settings s, PrintWriter out, BenchLink link, int half) {
        MemoryRegion target = link.receiverNode().registerMemory(ByteBuffer.allocateDirect(2 * half));
        MemoryRegion local = link.senderNode().registerMemory(ByteBuffer.allocateDirect(2 * half));
        OneSidedRegion.Pattern.fill(local.buffer().slice(0, half), half);
        OneSidedRegion.Pattern.fill(target.buffer().slice(half, half), half);
        RdmaConnection origin = link.sender();
        RemoteRegion remote = ConnectionOneSidedBench.exposeToSender(link, target, RemoteAccess.READ_WRITE);
        BenchCommand.Settings shown = ConnectionOneSidedBench.shownWithPolicy(s, "load-balanced");
        BenchCommand.header(out, shown, " (RdmaConnection put/get, eager off)");
        BenchReport report = BenchReport.of(s, "");
        int window = s.window();
        int slots = Math.max(1, half / s.maxSize());
        long extent = 0;
        for (OsuSchedule.Step step : s.schedule().steps(s.sizes(), true)) {
            int size = step.sizeBytes();
            extent = Math.max(extent, (long) Math.min(slots, window) * size);
            long[] ns = new long[3];
            for (int it = 0; it < step.warmup() + step.iterations(); it++) {
                for (int k = 0; k < 3; k++) {
                    int mode = (it + k) % 3;
                    long t0 = System.nanoTime();
                    window(origin, mode, local, remote, half, slots, window, size).then(origin.fence()).block(WAIT);
                    if (it >= step.warmup()) {
                        ns[mode] += System.nanoTime() - t0;
                    }
                }
            }
            if (step.printed()) {
                double bytes = (double) step.iterations() * window * size;
                double put = bytes / (ns[0] / 1e9) / 1e6;
                double get = bytes / (ns[1] / 1e9) / 1e6;
                double both = 2 * bytes / (ns[2] / 1e9) / 1e6;
                double gain = both / Math.max(put, get);
                out.printf(Locale.ROOT, "%-12d%16.2f%16.2f%16.2f%10.2f%n", size, put, get, both, gain);
                out.flush();
                report.putGet(step, put, get, both, gain);
            }
        }
        report.write();
        String mismatch = OneSidedRegion.Pattern.compare(target.buffer().slice(0, half), extent);
        String where = "put into the target";
        if (mismatch == null) {
            mismatch = OneSidedRegion.Pattern.compare(local.buffer().slice(half, half), extent);
            where = "got from the target";
        }
        out.println(mismatch == null
            ? "# verified: the " + extent + " bytes put into the target and the " + extent + " bytes got from it match the pattern"
            : "# VERIFICATION FAILED (" + where + "): " + mismatch);
        out.flush();
        return mismatch == null ? 0 : 3;
    }

    /** One window: mode 0 puts, 1 gets, 2 both (put and get alternately, all outstanding at once). */
    private static Mono<Void> window(RdmaConnection c, int mode, MemoryRegion local, RemoteRegion remote, int half, int slots, int window,
                                     int size) {
        int ops = mode == 2 ? 2 * window : window;
        return Flux.range(0, ops)
            .flatMap(j -> {
                boolean put = mode == 0 || mode == 2 && (j & 1) == 0;
                long offset = (long) ((mode == 2 ? j >> 1 : j) % slots) * size;
                return put ? c.put(local, offset, remote, offset, size) : c.get(local, half + offset, remote, half + offset, size);
            }, ops)
            .then();
    }
}
