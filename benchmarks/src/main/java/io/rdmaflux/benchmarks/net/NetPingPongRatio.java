package io.rdmaflux.benchmarks.net;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Locale;
import io.rdmaflux.benchmarks.RoundTripSide;
import org.HdrHistogram.Histogram;

/**
 * The 64 B round-trip ratio of {@link NetPingPongBenchmark} (RC SEND over the IP fabric vs a raw
 * NIO busy-poll ping-pong) measured in <em>one</em> process with the two sides interleaved: round
 * after round, one side is set up, warmed and measured while the other is torn down (its echo
 * thread stopped, so it takes no CPU), then the other. JMH runs the two sides in separate forks a
 * minute apart, so on a shared machine each fork can land in a different scheduling regime; here
 * both see the same conditions, round by round. One uncounted round per side warms the JIT first. Prints each side's p50/p90/p99 (µs) over all
 * rounds, the ratio of the p50s, and the median of the per-round ratios. Target (issue 3): p50
 * ratio &lt;= 1.2.
 *
 * <pre>
 * java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.net.NetPingPongRatio [rounds] [measure-ms]
 * </pre>
 */
public final class NetPingPongRatio {
    private NetPingPongRatio() {
    }

    /** One side of the comparison, driven through {@link NetPingPongBenchmark}'s own state and code. */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        long measureNs = (args.length > 1 ? Long.parseLong(args[1]) : 1_000) * 1_000_000L;
        if (rounds < 1 || measureNs <= 0) {
            throw new IllegalArgumentException("rounds >= 1 and measure-ms > 0 required but they were " + rounds + ", " + measureNs / 1_000_000);
        }
        NetPingPongBenchmark b = new NetPingPongBenchmark();
        NetPingPongBenchmark.Rc[] rc = new NetPingPongBenchmark.Rc[1];
        NetPingPongBenchmark.Nio[] nio = new NetPingPongBenchmark.Nio[1];
        RoundTripSide rcSide = new RoundTripSide() {
            public void open() {
                rc[0] = new NetPingPongBenchmark.Rc();
                rc[0].setUp();
            }

            public void roundTrip() {
                b.rcSend(rc[0]);
            }

            public void close() throws InterruptedException {
                rc[0].tearDown();
            }
        };
        RoundTripSide nioSide = new RoundTripSide() {
            public void open() throws IOException {
                nio[0] = new NetPingPongBenchmark.Nio();
                nio[0].setUp();
            }

            public void roundTrip() throws IOException {
                b.nioPingPong(nio[0]);
            }

            public void close() throws Exception {
                nio[0].tearDown();
            }
        };
        Histogram rcAll = new Histogram(3);
        Histogram nioAll = new Histogram(3);
        double[] roundRatios = new double[rounds];
        PrintStream out = System.out;
        out.printf(Locale.ROOT, "# 64 B round trip, RC SEND (IP fabric, loopback) vs raw NIO busy-poll, interleaved, %d rounds of %d ms per side%n",
            rounds, measureNs / 1_000_000);
        // one uncounted round per side first: the JIT compiles both paths before anything is measured
        RoundTripSide.record(rcSide, new Histogram(3), measureNs);
        RoundTripSide.record(nioSide, new Histogram(3), measureNs);
        out.println("# round  RC p50 (us)  NIO p50 (us)  ratio");
        for (int r = 0; r < rounds; r++) {
            // alternate which side goes first, so neither always runs right after a teardown
            Histogram h1 = new Histogram(3);
            Histogram h2 = new Histogram(3);
            boolean rcFirst = (r & 1) == 0;
            RoundTripSide.record(rcFirst ? rcSide : nioSide, rcFirst ? h1 : h2, measureNs);
            RoundTripSide.record(rcFirst ? nioSide : rcSide, rcFirst ? h2 : h1, measureNs);
            rcAll.add(h1);
            nioAll.add(h2);
            roundRatios[r] = (double) h1.getValueAtPercentile(50) / h2.getValueAtPercentile(50);
            out.printf(Locale.ROOT, "%7d  %11.2f  %12.2f  %5.2f%n", r + 1, h1.getValueAtPercentile(50) / 1e3, h2.getValueAtPercentile(50) / 1e3,
                roundRatios[r]);
        }
        java.util.Arrays.sort(roundRatios);
        double medianRatio = rounds % 2 == 1 ? roundRatios[rounds / 2] : (roundRatios[rounds / 2 - 1] + roundRatios[rounds / 2]) / 2;
        out.printf(Locale.ROOT, "# RC  p50 %.2f us, p90 %.2f us, p99 %.2f us (%d round trips)%n", rcAll.getValueAtPercentile(50) / 1e3,
            rcAll.getValueAtPercentile(90) / 1e3, rcAll.getValueAtPercentile(99) / 1e3, rcAll.getTotalCount());
        out.printf(Locale.ROOT, "# NIO p50 %.2f us, p90 %.2f us, p99 %.2f us (%d round trips)%n", nioAll.getValueAtPercentile(50) / 1e3,
            nioAll.getValueAtPercentile(90) / 1e3, nioAll.getValueAtPercentile(99) / 1e3, nioAll.getTotalCount());
        out.printf(Locale.ROOT, "# ratio of p50s %.3f, median of per-round ratios %.3f (target <= 1.2)%n",
            (double) rcAll.getValueAtPercentile(50) / nioAll.getValueAtPercentile(50), medianRatio);
    }
}
