package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaMessage;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pipeline between two processes over the IP fabric ({@link NetRails}): the sender
 * ({@code --connect}) streams the source as a header, the chunks and a trailer with the source's
 * SHA-256 ({@link PipelineWire}); the receiver ({@code --listen}) hashes (and in record mode counts)
 * what arrives, compares, answers with a verdict, and prints the summary. Both exit 0 only when the
 * receiver verified every byte.
 */
final class NetPipeline {
    private NetPipeline() {
    }

    /** What a side measured; {@code verified} decides the exit code. */
    record Outcome(boolean verified, long bytes, double seconds, long[] railBytes, long outOfOrder) {
    }

    // ---------------------------------------------------------------- receiver

    static Outcome receive(PipelineCommand.Settings s, NetRails.Settings ns, NetRails.HostPort at, Duration timeout, PrintWriter out) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        Scheduler consumer = Schedulers.newSingle("rdmaflux-consumer");
        try (NetRails link = NetRails.listen(ns, at, timeout, bound -> {
            out.println("rdmaflux pipeline: listening at " + bound + " (rails on " + String.join(",", ns.addresses())
                + "); waiting up to " + timeout.toSeconds() + " s for a sender (--connect)");
            out.flush();
        })) {
            Receiver r = new Receiver(s.chunkBytes());
            Disposable d = link.connection().receive()
                .publishOn(consumer, s.prefetch())
                .subscribe(r::onMessage, r.done::completeExceptionally,
                    () -> r.done.completeExceptionally(new UserError("the sender closed after " + r.received.get()
                        + " bytes, before its trailer (SHA-256)")));
            try {
                PipelineWire.Verdict v = Deadlines.await(r.done, deadlineNs, "the transfer from the sender");
                double seconds = (r.endNs - r.startNs) / 1e9;
                long outOfOrder = link.connection().metrics().outOfOrder();
                PipelineWire.Verdict answer = new PipelineWire.Verdict(v.verified(), v.receivedBytes(), outOfOrder, v.sha256());
                Deadlines.block(link.connection().send(Mono.just(answer.encode())), deadlineNs, "sending the verdict");
                List<String> lines = new ArrayList<>();
                PipelineWire.Header h = r.header;
                lines.add(String.format(Locale.ROOT, "rdmaflux pipeline --listen %s%s: %s of %s (%d file(s)) from the sender", at,
                    h != null && h.records() ? " --records" : "", PipelineCommand.mib(v.receivedBytes()), h != null ? h.name() : "?",
                    h != null ? h.files() : 0));
                lines.add(PipelineCommand.row("transport", link.describe()));
                lines.add(PipelineCommand.row("elapsed", String.format(Locale.ROOT, "%.2f s (header to trailer)", seconds)));
                lines.add(PipelineCommand.row("throughput", String.format(Locale.ROOT, "%.1f MiB/s", v.receivedBytes() / seconds / (1 << 20))));
                lines.add(PipelineCommand.row("out-of-order", outOfOrder + " messages waited in the reorder queue for an earlier PSN"));
                if (r.counts != null) {
                    WordCounts counts = r.counts;
                    lines.add(PipelineCommand.row("records", String.format(Locale.ROOT, "%d lines, %d words, %d distinct", counts.records(),
                        counts.fields(), counts.distinct())));
                    StringBuilder top = new StringBuilder();
                    for (Map.Entry<String, Long> e : counts.top(8)) {
                        top.append(top.length() > 0 ? ", " : "").append(e.getKey()).append('=').append(e.getValue());
                    }
                    lines.add(PipelineCommand.row("top words", top.toString()));
                }
                lines.add(PipelineCommand.row("sha-256 source", HexFormat.of().formatHex(r.sourceSha) + "  (the sender's trailer)"));
                lines.add(PipelineCommand.row("sha-256 received", HexFormat.of().formatHex(v.sha256()) + (v.verified() ? "  OK, verified" : "  MISMATCH")));
                lines.forEach(out::println);
                out.flush();
                link.closeGracefully(Duration.ofSeconds(10));
                return new Outcome(v.verified(), v.receivedBytes(), seconds, new long[0], outOfOrder);
            } finally {
                d.dispose();
            }
        } finally {
            consumer.dispose();
        }
    }

    /** The receiver's state machine: header, data up to the announced bytes, trailer. Runs on the consumer thread. */
    private static final class Receiver {
        final CompletableFuture<PipelineWire.Verdict> done = new CompletableFuture<>();
        final AtomicLong received = new AtomicLong();
        final MessageDigest digest = PipelineCommand.sha256();
        final byte[] scratch;
        PipelineWire.@Nullable Header header;
        @Nullable WordCounts counts;
        byte[] sourceSha = new byte[32];
        long startNs;
        long endNs;

        Receiver(int chunkBytes) {
            this.scratch = new byte[chunkBytes];
        }

        void onMessage(RdmaMessage m) {
            if (done.isDone()) {
                m.release();
                return;
            }
            try {
                PipelineWire.Header h = header;
                if (h == null) {
                    try {
                        header = PipelineWire.Header.decode(m);
                    } finally {
                        m.release();
                    }
                    counts = header.records() ? new WordCounts() : null;
                    startNs = System.nanoTime();
                } else if (received.get() < h.totalBytes()) {
                    byte[] buf = m.lengthBytes() <= scratch.length ? scratch : new byte[m.lengthBytes()];
                    PipelineCommand.consume(m, buf, digest, counts, received);
                    if (received.get() > h.totalBytes()) {
                        throw new UserError("the sender sent " + received.get() + " bytes but announced " + h.totalBytes());
                    }
                } else {
                    try {
                        sourceSha = PipelineWire.decodeTrailer(m);
                    } finally {
                        m.release();
                    }
                    endNs = System.nanoTime();
                    byte[] got = digest.digest();
                    done.complete(new PipelineWire.Verdict(Arrays.equals(got, sourceSha), received.get(), 0, got));
                }
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        }
    }

    // ---------------------------------------------------------------- sender

    static Outcome send(PipelineCommand.Settings s, NetRails.Settings ns, NetRails.HostPort to, FileSource source, Duration timeout,
                        PrintWriter out, DigestWarmup warmup) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        MessageDigest sourceDigest = PipelineCommand.sha256();
        byte[][] sourceSha = new byte[1][];
        Scheduler producer = Schedulers.newSingle("rdmaflux-producer");
        ProgressBar bar = null;
        try (NetRails link = NetRails.connect(ns, to, Duration.ofSeconds(Math.min(30, timeout.toSeconds())), "rdmaflux pipeline")) {
            CompletableFuture<PipelineWire.Verdict> verdict = link.connection().receive().next().map(m -> {
                try {
                    return PipelineWire.Verdict.decode(m);
                } finally {
                    m.release();
                }
            }).toFuture();
            PipelineWire.Header header = new PipelineWire.Header(source.totalBytes(), s.records(), source.fileCount(),
                s.input().getFileName() != null ? s.input().getFileName().toString() : s.input().toString());
            Flux<RdmaMessage> all = Flux.concat(
                Mono.fromCallable(header::encode),
                source.chunks(s.chunkBytes(), s.records(), sourceDigest).subscribeOn(producer),
                Mono.fromCallable(() -> {
                    sourceSha[0] = sourceDigest.digest();
                    return PipelineWire.trailer(sourceSha[0]);
                }));
            ProgressBar b = s.progress() ? new ProgressBarBuilder().setTaskName("sending").setInitialMax(source.totalBytes())
                .setUnit("MiB", 1 << 20).setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(100).showSpeed().build() : null;
            bar = b;
            WeightLog weightLog = PipelineCommand.weightLog(s, ns.policy(), link.connection(), "pipeline --connect " + to);
            Sampler sampler = new Sampler(() -> sum(link.railBytes()), link::railBytes, 100, done -> {
                if (b != null) {
                    b.stepTo(Math.min(done, source.totalBytes()));
                }
            });
            PipelineCommand.startThreads(producer);
            warmup.awaitReady(PipelineCommand.WARMUP_WAIT_MS);
            long t0 = System.nanoTime();
            sampler.startAt(t0);
            PipelineWire.Verdict v;
            List<Sampler.Sample> samples;
            try {
                Deadlines.block(link.connection().send(all), deadlineNs, "sending " + s.input());
                v = Deadlines.await(verdict, deadlineNs, "the receiver's verdict");
            } finally {
                samples = sampler.finish(() -> sum(link.railBytes()), link::railBytes);
                if (weightLog != null) {
                    weightLog.close();
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            if (b != null) {
                b.stepTo(source.totalBytes());
                b.close();
            }
            long[] railBytes = link.railBytes();
            String src = HexFormat.of().formatHex(sourceSha[0]);
            String dst = HexFormat.of().formatHex(v.sha256());
            boolean ok = v.verified() && src.equals(dst) && v.receivedBytes() == source.totalBytes();
            List<String> lines = new ArrayList<>();
            String capped = source.totalBytes() < source.availableBytes()
                ? String.format(Locale.ROOT, " (first %s of %s; --all for everything)", PipelineCommand.mib(source.totalBytes()),
                PipelineCommand.mib(source.availableBytes()))
                : "";
            lines.add(String.format(Locale.ROOT, "rdmaflux pipeline --connect %s%s: %s of %s%s, %d file(s)", to, s.records() ? " --records" : "",
                PipelineCommand.mib(v.receivedBytes()), s.input(), capped, source.fileCount()));
            lines.add(PipelineCommand.row("transport", link.describe() + ", policy " + s.policy() + ", " + (s.chunkBytes() >> 10) + " KiB chunks"));
            lines.add(PipelineCommand.row("elapsed", String.format(Locale.ROOT, "%.2f s (until the receiver's verdict)", seconds)));
            lines.add(PipelineCommand.row("throughput", String.format(Locale.ROOT, "%.1f MiB/s", source.totalBytes() / seconds / (1 << 20))));
            PipelineCommand.railRows(lines, railBytes, samples, null);
            String weights = PipelineCommand.weightsRow(ns.policy(), link.connection());
            if (weights != null) {
                lines.add(weights);
            }
            lines.add(PipelineCommand.row("out-of-order", v.outOfOrder() + " messages waited in the receiver's reorder queue for an earlier PSN"));
            lines.add(PipelineCommand.row("credit stalls", link.creditStalls() + " times the sender had a message and no rail had a credit"));
            lines.add(PipelineCommand.row("sha-256 source", src));
            lines.add(PipelineCommand.row("sha-256 received", dst + (ok ? "  OK, verified by the receiver" : "  MISMATCH (receiver)")));
            Path report = ReportWriter.write(s.reportDir(), "pipeline-net", "rdmaflux pipeline --connect " + to + ": " + s.input().getFileName(),
                lines, samples, link.rails());
            lines.forEach(out::println);
            out.println(PipelineCommand.row("report", report.toString()));
            out.flush();
            link.closeGracefully(Duration.ofSeconds(10));
            return new Outcome(ok, v.receivedBytes(), seconds, railBytes, v.outOfOrder());
        } finally {
            if (bar != null) {
                bar.close();
            }
            producer.dispose();
        }
    }

    private static long sum(long[] a) {
        long s = 0;
        for (long x : a) {
            s += x;
        }
        return s;
    }
}
