package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import org.HdrHistogram.Histogram;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Locale;

/**
 * OSU's one-sided atomic latency tests through the connection's atomics, both ends in this JVM on the mem or
 * net fabric (or ucx):
 * <ul>
 *   <li>{@code fop-latency} (osu_fop_latency: {@code MPI_Fetch_and_op} with MPI_SUM, then a flush): one
 *       {@code fetchAndAdd(remote, 0, 1)} until its original value came back;</li>
 *   <li>{@code cas-latency} (osu_cas_latency: {@code MPI_Compare_and_swap}, then a flush): one
 *       {@code compareAndSwap(remote, 0, i, i + 1)} until it returned, each one matching.</li>
 * </ul>
 * Size 8 (one 64-bit word) only, as OSU prints it; the table gives the mean, p50 and p99 of each atomic's
 * time. The receiver exposes a 64-byte region with READ_ATOMIC. After the run it checks the word: every
 * fetch-and-add counted once, every compare-and-swap matched (exit code 3 otherwise).
 */
final class AtomicLatencyBench {
    private static final Duration WAIT = Duration.ofMinutes(5);

    private AtomicLatencyBench() {
    }

    static int run(BenchCommand.Settings s, PrintWriter out) {
        try (BenchLink link = ConnectionOneSidedBench.openLink(s)) {
            return measure(s, out, link);
        }
    }

    private static int measure(BenchCommand.Settings s, PrintWriter out, BenchLink link) {
        boolean fop = s.test() == BenchCommand.Test.fop_latency;
        MemoryRegion target = link.receiverNode().registerMemory(ByteBuffer.allocateDirect(64));
        RdmaConnection origin = link.sender();
        RemoteRegion remote = ConnectionOneSidedBench.exposeToSender(link, target, RemoteAccess.READ_ATOMIC);
        BenchCommand.Settings shown = ConnectionOneSidedBench.shownWithPolicy(s, "one rail per atomic");
        BenchCommand.header(out, shown, fop ? " (RdmaConnection.fetchAndAdd, eager off)" : " (RdmaConnection.compareAndSwap, eager off)");
        BenchReport report = BenchReport.of(s, "");
        long done = 0;
        String mismatch = null;
        for (OsuSchedule.Step step : s.schedule().steps(s.sizes(), true)) {
            Histogram h = new Histogram(3);
            for (int it = 0; it < step.warmup() + step.iterations(); it++) {
                long t0 = System.nanoTime();
                Long old = fop ? origin.fetchAndAdd(remote, 0, 1).block(WAIT) : origin.compareAndSwap(remote, 0, done, done + 1).block(WAIT);
                long t = System.nanoTime() - t0;
                if (old == null || old != done) {
                    mismatch = "atomic " + done + " returned " + old + " where " + done + " was expected";
                }
                done++;
                if (it >= step.warmup()) {
                    h.recordValue(Math.max(1, t));
                }
            }
            if (step.printed()) {
                double mean = h.getMean() / 1000.0;
                double p50 = h.getValueAtPercentile(50) / 1000.0;
                double p99 = h.getValueAtPercentile(99) / 1000.0;
                out.printf(Locale.ROOT, "%-16d%12.2f%12.2f%12.2f%n", step.sizeBytes(), mean, p50, p99);
                out.flush();
                report.latency(step, mean, p50, p99);
            }
        }
        report.write();
        long word = target.buffer().order(ByteOrder.nativeOrder()).getLong(0);
        if (mismatch == null && word != done) {
            mismatch = "the word is " + word + " after " + done + " atomics";
        }
        out.println(mismatch == null
            ? "# verified: " + done + " " + (fop ? "fetch-and-adds" : "compare-and-swaps") + " each returned the previous count; the word is " + word
            : "# VERIFICATION FAILED: " + mismatch);
        out.flush();
        return mismatch == null ? 0 : 3;
    }
}
