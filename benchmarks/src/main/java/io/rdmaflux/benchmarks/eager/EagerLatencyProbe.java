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
 * {@value #ROUND_TRIPS} round trips alternate between them; the median round is reported, with the
 * median wall time beside it.
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.eager.EagerLatencyProbe [rounds]}
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
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.println("fabric | size | eager: CPU ns/round trip (wall) | send/recv: CPU ns (wall) | CPU ratio eager/send-recv");
        for (String fabric : new String[] {"mem", "net"}) {
            for (int size : new int[] {8, 64, 1024}) {
                try (Link on = new Link(fabric, true, size); Link off = new Link(fabric, false, size)) {
                    long[] cpuOn = new long[rounds];
                    long[] cpuOff = new long[rounds];
                    long[] wallOn = new long[rounds];
                    long[] wallOff = new long[rounds];
                    for (int w = 0; w < 5; w++) {
                        on.roundTrips(ROUND_TRIPS);
                        off.roundTrips(ROUND_TRIPS);
                    }
                    for (int r = 0; r < rounds; r++) {
                        long c0 = mx.getCurrentThreadCpuTime();
                        long t0 = System.nanoTime();
                        on.roundTrips(ROUND_TRIPS);
                        wallOn[r] = (System.nanoTime() - t0) / ROUND_TRIPS;
                        cpuOn[r] = (mx.getCurrentThreadCpuTime() - c0) / ROUND_TRIPS;
                        c0 = mx.getCurrentThreadCpuTime();
                        t0 = System.nanoTime();
                        off.roundTrips(ROUND_TRIPS);
                        wallOff[r] = (System.nanoTime() - t0) / ROUND_TRIPS;
                        cpuOff[r] = (mx.getCurrentThreadCpuTime() - c0) / ROUND_TRIPS;
                    }
                    long a = median(cpuOn);
                    long b = median(cpuOff);
                    System.out.printf(Locale.ROOT, "%s | %d | %d (%d) | %d (%d) | %.2f%n", fabric, size, a, median(wallOn), b, median(wallOff),
                        a / (double) b);
                }
            }
        }
    }

    private static long median(long[] v) {
        long[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
