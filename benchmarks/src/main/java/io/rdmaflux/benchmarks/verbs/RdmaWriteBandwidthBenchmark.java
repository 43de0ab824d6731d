package io.rdmaflux.benchmarks.verbs;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WrOpcode;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * RDMA WRITE bandwidth of the soft provider (mem fabric) against a raw {@code Unsafe.copyMemory}
 * of the same size, in the same run. Each invocation writes {@value #BATCH} messages back to back
 * (the last one signaled) and waits for the completion, as a bandwidth test on a NIC does; the
 * reference copies the same bytes {@value #BATCH} times. Bandwidth = ops/s x size; the figure is
 * {@code rdmaWrite / memcpy} per size (target: &gt;= 0.80 at 1 MiB).
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar RdmaWriteBandwidth -f1 -wi 2 -i 3 -w 1s -r 1s}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "-Dchronicle.analytics.disable=true"})
public class RdmaWriteBandwidthBenchmark {
    static final int BATCH = 16;

    @Param({"4096", "65536", "1048576"})
    public int size;

    private VerbsBench bench;
    private MemoryRegion src;
    private MemoryRegion dst;
    private final SendWorkRequest[] wrs = new SendWorkRequest[BATCH];
    private int completions;

    @Setup(Level.Trial)
    public void setUp() {
        bench = new VerbsBench(64);
        src = bench.pa.allocateMemory(size, Access.LOCAL_WRITE);
        dst = bench.pb.allocateMemory(size, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        src.buffer().put(0, (byte) 1);
        for (int i = 0; i < BATCH; i++) {
            wrs[i] = new SendWorkRequest().wrId(i).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, size)
                .remoteAddress(dst.address()).rkey(dst.rkey()).signaled(i == BATCH - 1);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        bench.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int rdmaWrite() {
        for (int i = 0; i < BATCH; i++) {
            bench.qa.postSend(wrs[i]);
        }
        completions = 0;
        while (completions == 0) {
            bench.progress();
            bench.ca.poll(16, wc -> {
                if (!wc.isSuccess()) {
                    throw new IllegalStateException(wc.toString());
                }
                completions++;
            });
        }
        return completions;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long memcpy() {
        long from = src.address();
        long to = dst.address();
        for (int i = 0; i < BATCH; i++) {
            VerbsBench.UNSAFE.copyMemory(from, to, size);
        }
        return to;
    }
}
