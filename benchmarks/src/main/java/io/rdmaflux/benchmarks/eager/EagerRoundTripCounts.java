package io.rdmaflux.benchmarks.eager;

import io.rdmaflux.core.ConnectionMetrics;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.eager.EagerChannel;
import io.rdmaflux.eager.EagerStats;
import reactor.core.publisher.Sinks;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * Counts the work of one round trip, eager ring vs send/receive, on the same setup as
 * {@link EagerLatencyBenchmark} (two INVOKER nodes driven by this thread): duty cycles ({@code drive()}
 * passes of both nodes) per round trip and until the server has the message, passes that found work,
 * bytes allocated on this thread, frames by type each side posted (from {@link ConnectionMetrics}), and
 * the eager channels' own counters (ring WRITEs, frames that fell back to send/receive, CREDIT control
 * messages). Not a timing: the counts say where a difference in latency can come from.
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.eager.EagerRoundTripCounts [fabric] [round trips]};
 * one configuration only (e.g. under JFR): {@code ... EagerRoundTripCounts mem 2000000 64 on|off}
 */
public final class EagerRoundTripCounts {
    private EagerRoundTripCounts() {
    }

    public static void main(String[] args) {
        String fabric = args.length > 0 ? args[0] : "mem";
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        if (args.length > 3 && "both".equals(args[3])) {
            interleaved(fabric, Integer.parseInt(args[2]), n);
            return;
        }
        if (args.length > 3) {
            // one configuration only (under a profiler): fabric, round trips, size, on|off
            count(fabric, "on".equals(args[3]), Integer.parseInt(args[2]), n);
            return;
        }
        for (int size : new int[] {8, 64, 1024}) {
            for (boolean eager : new boolean[] {true, false}) {
                count(fabric, eager, size, n);
            }
        }
    }

    private static void count(String fabric, boolean eager, int size, int n) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (EagerPair pair = new EagerPair(fabric, eager, 2048, 64, 64)) {
            RdmaConnection[] c = pair.connect();
            long[] serverGot = new long[1];
            c[1].send(c[1].receive().map(m -> {
                serverGot[0]++;
                RdmaMessage r = RdmaMessage.of(m.toByteArray());
                m.release();
                return r;
            })).subscribe();
            long[] received = new long[1];
            c[0].receive().subscribe(m -> {
                m.release();
                received[0]++;
            });
            Sinks.Many<RdmaMessage> sink = EagerPair.sender(c[0]);
            byte[] payload = new byte[size];
            long[] drives = new long[1];
            long[] toServer = new long[1];
            long[] busyClient = new long[1];
            long[] busyServer = new long[1];
            Runnable rounds = () -> {
                for (int i = 0; i < n; i++) {
                    long want = received[0] + 1;
                    long wantServer = serverGot[0] + 1;
                    sink.tryEmitNext(RdmaMessage.of(payload));
                    boolean there = false;
                    while (received[0] < want) {
                        if (pair.client.invoke() > 0) {
                            busyClient[0]++;
                        }
                        if (pair.server.invoke() > 0) {
                            busyServer[0]++;
                        }
                        drives[0]++;
                        if (!there) {
                            toServer[0]++;
                            there = serverGot[0] >= wantServer;
                        }
                    }
                }
            };
            rounds.run();
            drives[0] = 0;
            toServer[0] = 0;
            busyClient[0] = 0;
            busyServer[0] = 0;
            ConnectionMetrics m0c = c[0].metrics();
            ConnectionMetrics m0s = c[1].metrics();
            EagerStats[] e0 = eager ? stats(pair) : null;
            long a0 = mx.getThreadAllocatedBytes(Thread.currentThread().getId());
            long c0 = mx.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            rounds.run();
            long wall = System.nanoTime() - t0;
            long cpu = mx.getCurrentThreadCpuTime() - c0;
            long alloc = mx.getThreadAllocatedBytes(Thread.currentThread().getId()) - a0;
            ConnectionMetrics m1c = c[0].metrics();
            ConnectionMetrics m1s = c[1].metrics();
            EagerStats[] e1 = eager ? stats(pair) : null;
            StringBuilder sb = new StringBuilder();
            sb.append(String.format(Locale.ROOT, "%s %5d B eager=%-5s  per round trip: passes %.2f (to server %.2f, busy client %.2f server %.2f), alloc %.0f B, CPU %d ns (wall %d ns)",
                fabric, size, eager, drives[0] / (double) n, toServer[0] / (double) n, busyClient[0] / (double) n, busyServer[0] / (double) n,
                alloc / (double) n, cpu / n, wall / n));
            sb.append("\n    frames sent client/server:");
            for (FrameType t : FrameType.values()) {
                long cl = m1c.framesSent(t) - m0c.framesSent(t);
                long sv = m1s.framesSent(t) - m0s.framesSent(t);
                if (cl != 0 || sv != 0) {
                    sb.append(String.format(Locale.ROOT, " %s %.3f/%.3f", t, cl / (double) n, sv / (double) n));
                }
            }
            if (e0 != null && e1 != null) {
                for (int side = 0; side < 2; side++) {
                    EagerStats x = e0[side];
                    EagerStats y = e1[side];
                    sb.append(String.format(Locale.ROOT, "\n    %s eager: ring WRITEs %.3f (signalled %.3f, flushes %.4f), fallback frames %.3f, ring frames polled %.3f, CREDIT msgs %.3f, torn %d",
                        side == 0 ? "client" : "server", (y.ringFramesSent() - x.ringFramesSent()) / (double) n,
                        (y.ringWritesSignaled() - x.ringWritesSignaled()) / (double) n, (y.ringFlushes() - x.ringFlushes()) / (double) n,
                        (y.fallbackFramesSent() - x.fallbackFramesSent()) / (double) n,
                        (y.ringFramesReceived() - x.ringFramesReceived()) / (double) n, (y.creditsSent() - x.creditsSent()) / (double) n,
                        y.tornSlotsSeen() - x.tornSlotsSeen()));
                }
            }
            System.out.println(sb);
            sink.tryEmitComplete();
        }
    }

    /**
     * Eager and send/receive pairs side by side, rounds of 10 000 round trips alternating between them
     * through two distinct methods, so that a sampling profiler attached to this process tells their
     * stacks apart ({@link #eagerRounds} / {@link #sendRecvRounds}) while both see the same machine load.
     */
    private static void interleaved(String fabric, int size, int n) {
        try (EagerPair on = new EagerPair(fabric, true, 2048, 64, 64); EagerPair off = new EagerPair(fabric, false, 2048, 64, 64)) {
            Sinks.Many<RdmaMessage> sOn = echoAndSink(on);
            Sinks.Many<RdmaMessage> sOff = echoAndSink(off);
            long[] rOn = counter(on);
            long[] rOff = counter(off);
            byte[] payload = new byte[size];
            for (int done = 0; done < n; done += 10_000) {
                eagerRounds(on, sOn, rOn, payload, 10_000);
                sendRecvRounds(off, sOff, rOff, payload, 10_000);
            }
            sOn.tryEmitComplete();
            sOff.tryEmitComplete();
        }
    }

    private static Sinks.Many<RdmaMessage> echoAndSink(EagerPair pair) {
        RdmaConnection[] c = pair.connect();
        EagerPair.echo(c[1]);
        pair.clients.add(c[0]);
        return EagerPair.sender(c[0]);
    }

    private static long[] counter(EagerPair pair) {
        long[] received = new long[1];
        pair.clients.get(pair.clients.size() - 1).receive().subscribe(m -> {
            m.release();
            received[0]++;
        });
        return received;
    }

    private static void eagerRounds(EagerPair pair, Sinks.Many<RdmaMessage> sink, long[] received, byte[] payload, int n) {
        rounds(pair, sink, received, payload, n);
    }

    private static void sendRecvRounds(EagerPair pair, Sinks.Many<RdmaMessage> sink, long[] received, byte[] payload, int n) {
        rounds(pair, sink, received, payload, n);
    }

    private static void rounds(EagerPair pair, Sinks.Many<RdmaMessage> sink, long[] received, byte[] payload, int n) {
        for (int i = 0; i < n; i++) {
            long want = received[0] + 1;
            sink.tryEmitNext(RdmaMessage.of(payload));
            while (received[0] < want) {
                pair.drive();
            }
        }
    }

    private static EagerStats[] stats(EagerPair pair) {
        EagerChannel cc = pair.clientChannels.channels().get(0);
        EagerChannel sc = pair.serverChannels.channels().get(0);
        return new EagerStats[] {cc.stats(), sc.stats()};
    }
}
