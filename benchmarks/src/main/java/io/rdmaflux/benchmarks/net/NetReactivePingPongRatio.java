package io.rdmaflux.benchmarks.net;

import io.rdmaflux.benchmarks.RoundTripSide;
import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.engine.ProgressIdleStrategy;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Issue 19's latency figure: a 64 B round trip through the <em>reactive</em> API ({@code send} Flux →
 * {@code receive} Flux → echoed back by the server's {@code send(receive().map(..))}) over the soft
 * provider's IP fabric on loopback, against the raw NIO busy-poll ping-pong of
 * {@link NetPingPongBenchmark.Nio}, the two interleaved round by round in one process exactly as
 * {@link NetPingPongRatio} does for the verbs layer (one side set up, warmed and measured while the other
 * is torn down, the order alternating, one uncounted round per side first for the JIT).
 *
 * <p>The rdmaflux side: two nodes, eager ring off (RC send/receive), default windows; the ping-pong runs as
 * {@code bench latency} (OSU's osu_latency) runs it: the client's receive handler records the round trip and
 * emits the next ping, on its node's progress thread. {@code DEDICATED}: a progress thread per node, as
 * the NIO side has a thread per end; {@code SHARED}: one progress thread drives both nodes and their
 * INVOKER providers. Idle strategy: {@code low-latency} (default, as
 * {@code bench --idle}: {@link ProgressIdleStrategy#lowLatency()}, polling on for some 100 µs after the last
 * message, as the NIO side's threads poll) or {@code backoff} (the library's default).
 *
 * <p>Prints each round's p50s (µs) and ratio, both sides' p50/p90/p99 over all rounds, the ratio of the
 * p50s and the median of the per-round ratios. Target (issue 19): ratio &lt;= 1.2.
 *
 * <pre>
 * java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.net.NetReactivePingPongRatio [rounds] [measure-ms] [SHARED|DEDICATED] [low-latency|backoff]
 * </pre>
 */
public final class NetReactivePingPongRatio {
    private static final int SIZE = 64;

    private NetReactivePingPongRatio() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        long measureNs = (args.length > 1 ? Long.parseLong(args[1]) : 1_000) * 1_000_000L;
        ThreadingMode mode = ThreadingMode.valueOf(args.length > 2 ? args[2] : "DEDICATED");
        String idle = args.length > 3 ? args[3] : "low-latency";
        if (rounds < 1 || measureNs <= 0 || mode == ThreadingMode.INVOKER || !(idle.equals("low-latency") || idle.equals("backoff"))) {
            throw new IllegalArgumentException("rounds >= 1, measure-ms > 0, SHARED or DEDICATED and low-latency or backoff required but they were "
                + rounds + ", " + measureNs / 1_000_000 + ", " + mode + ", " + idle);
        }
        NetPingPongBenchmark b = new NetPingPongBenchmark();
        NetPingPongBenchmark.Nio[] nio = new NetPingPongBenchmark.Nio[1];
        RoundTripSide reactive = new ReactiveSide(mode, idle.equals("low-latency"));
        RoundTripSide nioSide = new RoundTripSide() {
            public void open() throws Exception {
                nio[0] = new NetPingPongBenchmark.Nio();
                nio[0].setUp();
            }

            public void roundTrip() throws Exception {
                b.nioPingPong(nio[0]);
            }

            public void close() throws Exception {
                nio[0].tearDown();
            }
        };
        PrintStream out = System.out;
        out.printf(Locale.ROOT, "# %d B round trip, rdmaflux send/receive (%s, idle %s, IP fabric, loopback) vs raw NIO busy-poll, "
            + "interleaved, %d rounds of %d ms per side%n", SIZE, mode, idle, rounds, measureNs / 1_000_000);
        record(reactive, new Histogram(3), measureNs);
        record(nioSide, new Histogram(3), measureNs);
        Histogram rAll = new Histogram(3);
        Histogram nAll = new Histogram(3);
        double[] ratios = new double[rounds];
        out.println("# round  rdmaflux p50 (us)  NIO p50 (us)  ratio");
        for (int r = 0; r < rounds; r++) {
            Histogram hr = new Histogram(3);
            Histogram hn = new Histogram(3);
            if ((r & 1) == 0) {
                record(reactive, hr, measureNs);
                record(nioSide, hn, measureNs);
            } else {
                record(nioSide, hn, measureNs);
                record(reactive, hr, measureNs);
            }
            rAll.add(hr);
            nAll.add(hn);
            ratios[r] = (double) hr.getValueAtPercentile(50) / hn.getValueAtPercentile(50);
            out.printf(Locale.ROOT, "%7d  %17.2f  %12.2f  %5.2f%n", r + 1, hr.getValueAtPercentile(50) / 1e3,
                hn.getValueAtPercentile(50) / 1e3, ratios[r]);
        }
        Arrays.sort(ratios);
        double median = rounds % 2 == 1 ? ratios[rounds / 2] : (ratios[rounds / 2 - 1] + ratios[rounds / 2]) / 2;
        print(out, "rdmaflux", rAll);
        print(out, "NIO", nAll);
        out.printf(Locale.ROOT, "# ratio of p50s %.3f, median of per-round ratios %.3f (target <= 1.2)%n",
            (double) rAll.getValueAtPercentile(50) / nAll.getValueAtPercentile(50), median);
    }

    private static void print(PrintStream out, String side, Histogram h) {
        out.printf(Locale.ROOT, "# %-8s p50 %.2f us, p90 %.2f us, p99 %.2f us (%d round trips)%n", side, h.getValueAtPercentile(50) / 1e3,
            h.getValueAtPercentile(90) / 1e3, h.getValueAtPercentile(99) / 1e3, h.getTotalCount());
    }

    /** Records {@code side}'s round trips: the reactive side runs its own ping-pong, the NIO side through {@link RoundTripSide}. */
    private static void record(RoundTripSide side, Histogram h, long measureNs) throws Exception {
        if (side instanceof ReactiveSide r) {
            r.record(h, measureNs);
        } else {
            RoundTripSide.record(side, h, measureNs);
        }
    }

    /**
     * Two nodes over the IP fabric; the server echoes each message. The ping-pong runs as {@code bench latency}
     * runs it (OSU's osu_latency over the reactive API): the client's receive handler, on its node's progress
     * thread, records the round trip and emits the next ping; the caller's thread only waits for the end.
     */
    private static final class ReactiveSide implements RoundTripSide {
        private final ThreadingMode mode;
        private final boolean lowLatency;
        private final byte[] payload = new byte[SIZE];
        private NetNodePair pair;
        private RdmaConnection client;

        ReactiveSide(ThreadingMode mode, boolean lowLatency) {
            this.mode = mode;
            this.lowLatency = lowLatency;
        }

        private RdmaNode node(SoftProvider p, String name) {
            RdmaNode.Builder nb = RdmaNode.builder().provider(p).name("rtt-" + name).threadingMode(mode).eager(EagerSpec.OFF);
            return (lowLatency ? nb.idleStrategy(ProgressIdleStrategy.lowLatency()) : nb).build();
        }

        @Override
        public void open() {
            pair = NetNodePair.open("rtt-net", this::node);
            client = pair.client();
            RdmaConnection server = pair.server();
            server.send(server.receive().map(m -> {
                byte[] copy = m.toByteArray();
                m.release();
                return RdmaMessage.of(copy);
            })).subscribe();
        }

        /** Warms for a quarter of {@code measureNs}, then records each round trip (ns) for {@code measureNs}; then closes. */
        void record(Histogram h, long measureNs) throws Exception {
            open();
            try {
                CompletableFuture<Void> done = new CompletableFuture<>();
                Sinks.Many<RdmaMessage> pings = Sinks.many().unicast().onBackpressureBuffer();
                long t0 = System.nanoTime();
                long measureFrom = t0 + measureNs / 4;
                long end = measureFrom + measureNs;
                long[] sentAt = {t0};
                client.receive().subscribe(m -> {
                    m.release();
                    long now = System.nanoTime();
                    if (now - measureFrom >= 0) {
                        h.recordValue(now - sentAt[0]);
                    }
                    if (now - end < 0) {
                        sentAt[0] = System.nanoTime();
                        pings.tryEmitNext(RdmaMessage.of(payload));
                    } else {
                        pings.tryEmitComplete();
                        done.complete(null);
                    }
                }, done::completeExceptionally);
                // the first ping is part of the sent publisher, so that only the handler emits into the sink
                client.send(Mono.fromCallable(() -> RdmaMessage.of(payload)).concatWith(pings.asFlux())).subscribe(null, done::completeExceptionally);
                done.get(measureNs / 1_000_000 * 2 + 30_000, TimeUnit.MILLISECONDS);
            } finally {
                close();
            }
        }

        @Override
        public void roundTrip() {
            throw new UnsupportedOperationException("the reactive side records its own ping-pong: record(h, ns)");
        }

        @Override
        public void close() {
            pair.close();
        }
    }
}
