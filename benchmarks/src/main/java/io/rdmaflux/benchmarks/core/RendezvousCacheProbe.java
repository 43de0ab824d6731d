package io.rdmaflux.benchmarks.core;

import io.rdmaflux.core.*;
import io.rdmaflux.verbs.*;
import io.rdmaflux.verbs.soft.*;
import org.agrona.concurrent.UnsafeBuffer;
import reactor.core.publisher.Flux;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.lang.management.*;

/**
 * The 1 MiB full path against memcpy, interleaved in one process (rounds of 2000 copies, then 2000
 * messages send Flux → receive Flux from registered memory, SHARED progress thread), with the progress
 * thread's CPU share: shows what the receiver's number of rendezvous buffers does to the copy (with
 * more than one, the NIC's destinations no longer fit the core's L2).
 *
 * <p>Run: {@code java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.core.RendezvousCacheProbe 8}
 * (the argument: rendezvous buffers per node).
 */
public final class RendezvousCacheProbe {
  private RendezvousCacheProbe() {
  }

  public static void main(String[] args) throws Exception {
    int size = 1 << 20; int rv = Integer.parseInt(args[0]);
    SoftFabric fabric = SoftFabric.mem("probe");
    SoftProvider pa = SoftProvider.builder().name("pa").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
    SoftProvider pb = SoftProvider.builder().name("pb").fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
    RdmaNode a = RdmaNode.builder().provider(pa).name("a").bufferBytes(65536).receiveBuffers(128).sendBuffers(128).maxMessageBytes(2<<20).rendezvousBuffers(rv).threadingMode(ThreadingMode.SHARED).build();
    RdmaNode b = RdmaNode.builder().provider(pb).name("b").bufferBytes(65536).receiveBuffers(128).sendBuffers(128).maxMessageBytes(2<<20).rendezvousBuffers(rv).threadingMode(ThreadingMode.SHARED).build();
    RdmaServer server = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
    RdmaConnection client = a.connect(server.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
    RdmaConnection s = server.accept().blockFirst(Duration.ofSeconds(10));
    AtomicLong received = new AtomicLong();
    s.receive().subscribe(m -> { m.release(); received.incrementAndGet(); });
    MemoryRegion reg = a.registerMemory(ByteBuffer.allocateDirect(size));
    UnsafeBuffer src = new UnsafeBuffer(ByteBuffer.allocateDirect(size));
    UnsafeBuffer dst = new UnsafeBuffer(ByteBuffer.allocateDirect(size));
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    for (int round = 0; round < 8; round++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < 2000; i++) dst.putBytes(0, src, 0, size);
      long tm = System.nanoTime() - t0;
      long cpu0 = progressCpu(mx);
      t0 = System.nanoTime();
      for (int k = 0; k < 20; k++) {
        long target = received.get() + 100;
        client.send(Flux.range(0, 100).map(i -> RdmaMessage.of(reg, 0, size))).block(Duration.ofSeconds(60));
        while (received.get() < target) Thread.onSpinWait();
      }
      long tr = System.nanoTime() - t0;
      long cpu = progressCpu(mx) - cpu0;
      if (round >= 2) System.out.printf("rv=%d memcpy %.1f us/msg  rdmaflux %.1f us/msg  ratio %.2f  progress cpu %.0f%%%n", rv, tm/2000/1e3, tr/2000/1e3, (double) tm / tr, 100.0 * cpu / tr);
    }
    a.close(); b.close(); pa.close(); pb.close();
  }
  static long progressCpu(ThreadMXBean mx) {
    long sum = 0;
    for (ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) if (ti != null && ti.getThreadName().contains("progress")) sum += mx.getThreadCpuTime(ti.getThreadId());
    return sum;
  }
}
