package io.rdmaflux.benchmarks.eager;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import reactor.core.publisher.Sinks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;

/**
 * Round trip, eager ring vs send/receive, as the CPU time of the one thread that runs it: both nodes are
 * INVOKER and driven by this thread ({@link EagerPair}), so on the in-JVM fabric the whole round trip
 * (send Flux, both channels, the soft NICs, echo, receive Flux, release) executes here and its thread CPU
 * time is its latency without a scheduler in the way; on the IP fabric the loopback TCP syscalls are
 * counted too. A loaded host stretches wall time far more than it changes CPU time, so this is the figure
 * to compare on a shared machine. The eager and the send/receive pair live side by side and rounds of
 * {@value #ROUND_TRIPS} round trips (or as given) alternate between them, in alternating order; the
 * median round of each is reported, with the median wall time beside it, and the median of the rounds'
 * ratios (each taken from two adjacent rounds, so a load swing hits both sides of it alike).
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.eager.EagerLatencyProbe [rounds] [mem,net] [round trips per round]}
 */
public final class EagerLatencyProbe {
    static final int ROUND_TRIPS = 2_000;

    private EagerLatencyProbe() {
    }

    /** One connection with an echoing server. */
    private static final class Link implements AutoCloseable {
        final EagerPair pair;
        final Sinks.Many<RdmaMessage> sink;
        final byte[] payload;
        long received;

        Link(String fabric, boolean eager, int size) {
            pair = new EagerPair(fabric, eager, 2048, 64, 64);
            RdmaConnection[] c = pair.connect();
            EagerPair.echo(c[1]);
            c[0].receive().subscribe(m -> {
                m.release();
                received++;
            });
            sink = EagerPair.sender(c[0]);
            payload = new byte[size];
        }

        void roundTrips(int n) {
            for (int i = 0; i < n; i++) {
                long want = received + 1;
                sink.tryEmitNext(RdmaMessage.of(payload));
                while (received < want) {
                    pair.drive();
                }
            }
        }

        @Override
        public void close() {
            sink.tryEmitComplete();
            pair.close();
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 11;
        String[] fabrics = args.length > 1 ? args[1].split(",") : new String[] {"mem", "net"};
        int roundTrips = args.length > 2 ? Integer.parseInt(args[2]) : ROUND_TRIPS;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.println("fabric | size | eager: CPU ns/round trip (wall) | send/recv: CPU ns (wall) | CPU ratio eager/send-recv"
            + " (median of the rounds' ratios)");
        for (String fabric : fabrics) {
            for (int size : new int[] {8, 64, 1024}) {
                try (Link on = new Link(fabric, true, size); Link off = new Link(fabric, false, size)) {
                    long[] cpuOn = new long[rounds];
                    long[] cpuOff = new long[rounds];
                    long[] wallOn = new long[rounds];
                    long[] wallOff = new long[rounds];
                    double[] ratio = new double[rounds];
                    for (int w = 0; w < 5; w++) {
                        on.roundTrips(10_000);
                        off.roundTrips(10_000);
                    }
                    long[] t = new long[2];
                    for (int r = 0; r < rounds; r++) {
                        // the order alternates, so neither side always runs right after the other
                        if ((r & 1) == 0) {
                            measure(mx, on, roundTrips, t);
                            cpuOn[r] = t[0];
                            wallOn[r] = t[1];
                            measure(mx, off, roundTrips, t);
                            cpuOff[r] = t[0];
                            wallOff[r] = t[1];
                        } else {
                            measure(mx, off, roundTrips, t);
                            cpuOff[r] = t[0];
                            wallOff[r] = t[1];
                            measure(mx, on, roundTrips, t);
                            cpuOn[r] = t[0];
                            wallOn[r] = t[1];
                        }
                        ratio[r] = cpuOn[r] / (double) cpuOff[r];
                    }
                    double[] rs = ratio.clone();
                    Arrays.sort(rs);
                    System.out.printf(Locale.ROOT, "%s | %d | %d (%d) | %d (%d) | %.2f%n", fabric, size, median(cpuOn), median(wallOn),
                        median(cpuOff), median(wallOff), rs[rs.length / 2]);
                }
            }
        }
    }

    /** {@code n} round trips on {@code link}: {@code out[0]} CPU ns and {@code out[1]} wall ns per round trip. */
    private static void measure(ThreadMXBean mx, Link link, int n, long[] out) {
        long c0 = mx.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        link.roundTrips(n);
        out[1] = (System.nanoTime() - t0) / n;
        out[0] = (mx.getCurrentThreadCpuTime() - c0) / n;
    }

    private static long median(long[] v) {
        long[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
