package io.rdmaflux.benchmarks.net;

import io.rdmaflux.core.ConnectionMetrics;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;

/**
 * What one 32 B message costs on the net fabric's full path, configured as
 * {@link NetMessageRateBenchmark}'s {@code rdmaflux} (2560 B buffers, 512 of them, send queue 64, eager
 * off), per round: the wall rate, the progress threads' CPU ns and allocated bytes per message, the
 * messages per DATA frame (how well the send pipeline packs), CREDIT frames and credit stalls. CPU
 * time and allocation are what a loaded machine disturbs least; messages per frame shows whether the
 * packing depends on timing (the rate's variance).
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.net.NetMessageRateProbe [rounds] [SHARED|DEDICATED] [spin|park] [creditsPerBuffer]}
 * (default 12 rounds of 100 batches of 10,000 messages; all printed, the first ones are warm-up). A third
 * argument {@code spin} waits as the benchmark did before (spinning; {@code park} blocks as it does now), a
 * fourth sets {@code messageCreditsPerBuffer} (default: the library's, 8 since issue 19's byte-bounded grant; older builds 1); {@code PROBE_PERF=1} in the environment
 * counts the last round's system calls with {@code perf stat}.
 */
public final class NetMessageRateProbe {
    private NetMessageRateProbe() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 12;
        ThreadingMode mode = ThreadingMode.valueOf(args.length > 1 ? args[1] : "SHARED");
        boolean spin = args.length > 2 && args[2].equals("spin");
        int perBuffer = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        NetTransportConfig cfg = NetTransportConfig.loopback();
        SoftProvider pa = NetProviders.builder(cfg).name("probe-net-a").threadingMode(ThreadingMode.INVOKER).build();
        SoftProvider pb = NetProviders.builder(cfg).name("probe-net-b").threadingMode(ThreadingMode.INVOKER).build();
        RdmaNode a = node(pa, "a", mode, perBuffer);
        RdmaNode b = node(pb, "b", mode, perBuffer);
        RdmaServer server = b.bind(new PortAddress("net", "127.0.0.1", 0));
        RdmaConnection client = a.connect(server.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
        RdmaConnection s = server.accept().blockFirst(Duration.ofSeconds(10));
        server.close();
        if (args.length > 2 && args[2].equals("rtt")) {
            roundTrips(rounds, client, s);
            client.close();
            a.close();
            b.close();
            pa.close();
            pb.close();
            return;
        }
        AtomicLong received = new AtomicLong();
        long[] target = {-1};
        Thread main = Thread.currentThread();
        s.receive().subscribe(m -> {
            m.release();
            long c = received.get() + 1;
            received.lazySet(c);
            if (c == target[0]) {
                java.util.concurrent.locks.LockSupport.unpark(main);
            }
        });
        byte[] payload = new byte[NetMessageRateBenchmark.SIZE];
        int batch = NetMessageRateBenchmark.BATCH;
        Flux<RdmaMessage> flux = Flux.range(0, batch).map(i -> RdmaMessage.of(payload));
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        System.out.println("round  M msg/s  cpu ns/msg  user ns/msg  alloc B/msg  msg/DATA  CREDIT/10k  stalls  blocks/batch");
        for (int round = 0; round < rounds; round++) {
            ConnectionMetrics m0 = client.metrics();
            ConnectionMetrics r0 = s.metrics();
            long[] c0 = progress(mx);
            long b0 = sharedBlocks();
            Process perf = round == rounds - 1 && System.getenv("PROBE_PERF") != null ? startPerf() : null;
            long t0 = System.nanoTime();
            int batches = 100;
            for (int k = 0; k < batches; k++) {
                long goal = received.get() + batch;
                if (spin) {
                    // the benchmark's old wait: spin on the send's completion, then on the last message
                    java.util.concurrent.CompletableFuture<Void> f = client.send(flux).toFuture();
                    while (!f.isDone()) {
                        Thread.onSpinWait();
                    }
                    while (received.get() < goal) {
                        Thread.onSpinWait();
                    }
                } else {
                    // as NetMessageRateBenchmark: block until the receiver unparks this thread at the last message
                    target[0] = goal;
                    client.send(flux).subscribe();
                    while (received.get() < goal) {
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                    }
                }
            }
            long t = System.nanoTime() - t0;
            if (perf != null) {
                stopPerf(perf, (long) 100 * batch);
            }
            long[] c1 = progress(mx);
            ConnectionMetrics m1 = client.metrics();
            ConnectionMetrics r1 = s.metrics();
            long n = (long) batches * batch;
            long data = m1.framesSent(FrameType.DATA) - m0.framesSent(FrameType.DATA);
            long credit = r1.framesSent(FrameType.CREDIT) - r0.framesSent(FrameType.CREDIT);
            System.out.printf("%5d  %7.2f  %10.1f  %11.1f  %11.1f  %8.1f  %10.1f  %6d  %12.1f%n", round, n * 1e3 / t, (double) (c1[0] - c0[0]) / n,
                (double) (c1[2] - c0[2]) / n, (double) (c1[1] - c0[1]) / n, (double) n / Math.max(1, data), credit * 1e4 / n,
                m1.creditStalls() - m0.creditStalls(), (sharedBlocks() - b0) / (double) batches);
        }
        client.close();
        a.close();
        b.close();
        pa.close();
        pb.close();
    }

    /**
     * 64 B round trips through {@code send}/{@code receive} (the server echoes each message back): per
     * round, the median and p99 round trip, the progress threads' CPU per round trip, and with PROBE_PERF the
     * last round's system calls per round trip. The caller's thread emits each request and spins for the
     * echo, as a request/response client does.
     */
    private static void roundTrips(int rounds, RdmaConnection client, RdmaConnection server) throws Exception {
        server.send(server.receive().map(m -> {
            byte[] b = m.toByteArray();
            m.release();
            return RdmaMessage.of(b);
        })).subscribe();
        AtomicLong echoed = new AtomicLong();
        client.receive().subscribe(m -> {
            m.release();
            echoed.lazySet(echoed.get() + 1);
        });
        reactor.core.publisher.Sinks.Many<RdmaMessage> sink = reactor.core.publisher.Sinks.many().unicast().onBackpressureBuffer();
        client.send(sink.asFlux()).subscribe();
        byte[] payload = new byte[64];
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int n = 20_000;
        long[] rtt = new long[n];
        System.out.println("round  p50 us  p99 us  cpu us/rtt");
        for (int round = 0; round < rounds; round++) {
            Process perf = round == rounds - 1 && System.getenv("PROBE_PERF") != null ? startPerf() : null;
            long[] c0 = progress(mx);
            for (int i = 0; i < n; i++) {
                long want = echoed.get() + 1;
                long t0 = System.nanoTime();
                sink.tryEmitNext(RdmaMessage.of(payload));
                while (echoed.get() < want) {
                    Thread.onSpinWait();
                }
                rtt[i] = System.nanoTime() - t0;
            }
            long[] c1 = progress(mx);
            if (perf != null) {
                stopPerf(perf, n);
            }
            java.util.Arrays.sort(rtt);
            System.out.printf("%5d  %6.2f  %6.2f  %10.2f%n", round, rtt[n / 2] / 1e3, rtt[n * 99 / 100] / 1e3, (c1[0] - c0[0]) / 1e3 / n);
        }
        sink.tryEmitComplete();
    }

    private static RdmaNode node(SoftProvider p, String name, ThreadingMode mode, int perBuffer) {
        RdmaNode.Builder b = RdmaNode.builder().provider(p).name(name).bufferBytes(2560).receiveBuffers(512).sendBuffers(512).sendQueue(64)
            .threadingMode(mode).eager(EagerSpec.OFF);
        // only when asked, so the probe also runs against builds older than the option (0: the build's default)
        return (perBuffer == 0 ? b : b.messageCreditsPerBuffer(perBuffer)).build();
    }

    /**
     * perf stat on this process's system calls and context switches over the last round (PROBE_PERF set):
     * the syscall tracepoints count every call, at no cost to the traced threads worth speaking of.
     */
    private static Process startPerf() throws Exception {
        Process p = new ProcessBuilder("perf", "stat", "-x", ",", "-e",
            "syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_read,syscalls:sys_enter_readv,"
                + "syscalls:sys_enter_epoll_wait,syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield,context-switches",
            "-p", Long.toString(ProcessHandle.current().pid())).redirectErrorStream(true).start();
        Thread.sleep(500);
        return p;
    }

    private static void stopPerf(Process perf, long messages) throws Exception {
        new ProcessBuilder("kill", "-INT", Long.toString(perf.pid())).start().waitFor();
        String out = new String(perf.getInputStream().readAllBytes());
        perf.waitFor();
        for (String line : out.split("\n")) {
            String[] f = line.split(",");
            if (f.length > 2 && !f[0].isBlank()) {
                try {
                    System.out.printf("  %-36s %12s  %.5f per message (or round trip)%n", f[2], f[0], Long.parseLong(f[0].trim()) / (double) messages);
                } catch (NumberFormatException e) {
                    System.out.println("  " + line);
                }
            }
        }
    }

    /** Blocks (parks or selector waits) of the SHARED progress thread's idle strategy so far (reflection; -1 if unknown). */
    private static long sharedBlocks() {
        try {
            Class<?> c = Class.forName("io.rdmaflux.core.engine.SharedProgressThread");
            java.lang.reflect.Field f = c.getDeclaredField("instance");
            f.setAccessible(true);
            Object t = f.get(null);
            if (t == null) {
                return -1;
            }
            java.lang.reflect.Field idle = c.getDeclaredField("idle");
            idle.setAccessible(true);
            return ((io.rdmaflux.core.engine.ProgressIdleStrategy) idle.get(t)).blocks();
        } catch (ReflectiveOperationException e) {
            return -1;
        }
    }

    /** CPU ns, allocated bytes and user-mode CPU ns of the progress threads so far. */
    private static long[] progress(com.sun.management.ThreadMXBean mx) {
        long cpu = 0;
        long alloc = 0;
        long user = 0;
        for (ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (ti != null && ti.getThreadName().contains("progress")) {
                cpu += mx.getThreadCpuTime(ti.getThreadId());
                alloc += mx.getThreadAllocatedBytes(ti.getThreadId());
                user += mx.getThreadUserTime(ti.getThreadId());
            }
        }
        return new long[] {cpu, alloc, user};
    }
}
