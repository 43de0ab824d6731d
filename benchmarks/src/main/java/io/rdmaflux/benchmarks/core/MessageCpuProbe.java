package io.rdmaflux.benchmarks.core;

import io.rdmaflux.core.*;
import io.rdmaflux.verbs.*;
import io.rdmaflux.verbs.soft.*;
import org.agrona.concurrent.BackoffIdleStrategy;
import reactor.core.publisher.Flux;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.lang.management.*;

/**
 * CPU ns of the progress threads per 32 B message on the full path, configured as
 * {@link MessageRateBenchmark} (2560 B buffers, 512 of them, send queue 64): an A/B tool that a
 * loaded machine disturbs less than a throughput figure (CPU time, not wall time). With
 * {@code DEDICATED} (each node its own progress thread) it prints each thread's share, the messages per
 * DATA frame the receiver saw and its duty cycles per message, which say where DEDICATED's time goes
 * against SHARED (one thread doing both nodes' work).
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.core.MessageCpuProbe [rounds [SHARED|DEDICATED [creditsPerBuffer [agrona|default]]]]}
 * (default 12 rounds of 2 M messages, SHARED; the first 4 are warm-up and not printed).
 */
public final class MessageCpuProbe {
  private MessageCpuProbe() {
  }

  public static void main(String[] args) throws Exception {
    SoftFabric fabric = SoftFabric.mem("probe");
    SoftProvider pa = SoftProvider.builder().name("pa").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
    SoftProvider pb = SoftProvider.builder().name("pb").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
    ThreadingMode mode = args.length > 1 ? ThreadingMode.valueOf(args[1]) : ThreadingMode.SHARED;
    // a third argument sets messageCreditsPerBuffer (builds before the option: leave it out)
    int perBuffer = args.length > 2 ? Integer.parseInt(args[2]) : 0;
    // a fourth, "default", keeps the node's own idle strategy (ProgressIdleStrategy.backoff) instead of Agrona's BackoffIdleStrategy
    boolean nodeIdle = args.length > 3 && args[3].equals("default");
    RdmaNode.Builder ab = RdmaNode.builder().provider(pa).name("a").bufferBytes(2560).receiveBuffers(512).sendBuffers(512).sendQueue(64).threadingMode(mode);
    RdmaNode.Builder bb = RdmaNode.builder().provider(pb).name("b").bufferBytes(2560).receiveBuffers(512).sendBuffers(512).sendQueue(64).threadingMode(mode);
    if (!nodeIdle) {
      ab.idleStrategy(new BackoffIdleStrategy());
      bb.idleStrategy(new BackoffIdleStrategy());
    }
    RdmaNode a = (perBuffer > 0 ? ab.messageCreditsPerBuffer(perBuffer) : ab).build();
    RdmaNode b = (perBuffer > 0 ? bb.messageCreditsPerBuffer(perBuffer) : bb).build();
    RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
    RdmaConnection client = a.connect(server.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
    RdmaConnection s = server.accept().blockFirst(Duration.ofSeconds(10));
    AtomicLong received = new AtomicLong();
    s.receive().subscribe(m -> { m.release(); received.lazySet(received.get() + 1); });
    byte[] payload = new byte[32];
    Flux<RdmaMessage> batch = Flux.range(0, 10_000).map(i -> RdmaMessage.of(payload));
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 12;
    System.out.println("threading " + mode);
    for (int round = 0; round < rounds; round++) {
      long cpu0 = progressCpu(mx);
      long cpuA0 = threadCpu(mx, "progress-a");
      long cpuB0 = threadCpu(mx, "progress-b");
      long self0 = mx.getCurrentThreadCpuTime();
      long frames0 = s.metrics().framesReceived().get(io.rdmaflux.core.frame.FrameType.DATA);
      long t0 = System.nanoTime();
      int batches = 200;
      for (int k = 0; k < batches; k++) {
        long target = received.get() + 10_000;
        client.send(batch).block(Duration.ofSeconds(60));
        while (received.get() < target) Thread.onSpinWait();
      }
      long t = System.nanoTime() - t0;
      long cpu = progressCpu(mx) - cpu0;
      double n = batches * 10_000.0;
      if (round >= 4) {
        System.out.printf("%.1f ns cpu/msg  %.2f M msg/s wall", cpu / n, n * 1e3 / t);
        if (mode == ThreadingMode.DEDICATED) {
          System.out.printf("  (sender's thread %.1f, receiver's %.1f, benchmark thread %.1f ns/msg; %.1f msgs per frame received)",
              (threadCpu(mx, "progress-a") - cpuA0) / n, (threadCpu(mx, "progress-b") - cpuB0) / n, (mx.getCurrentThreadCpuTime() - self0) / n,
              n / Math.max(1, s.metrics().framesReceived().get(io.rdmaflux.core.frame.FrameType.DATA) - frames0));
        }
        System.out.println();
      }
    }
    client.close(); a.close(); b.close(); pa.close(); pb.close();
  }
  static long threadCpu(ThreadMXBean mx, String nameContains) {
    long sum = 0;
    for (ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) if (ti != null && ti.getThreadName().contains(nameContains)) sum += mx.getThreadCpuTime(ti.getThreadId());
    return sum;
  }

  static long progressCpu(ThreadMXBean mx) {
    long sum = 0;
    for (ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) if (ti != null && ti.getThreadName().contains("progress")) sum += mx.getThreadCpuTime(ti.getThreadId());
    return sum;
  }
}
