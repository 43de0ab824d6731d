package io.rdmaflux.benchmarks.verbs;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WorkCompletion;
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
 * SEND/RECV message rate of the soft provider (mem fabric) at 32 bytes: per invocation
 * {@value #BATCH} receives are posted, {@value #BATCH} sends posted (the last one signaled, as
 * message-rate tests do), and the receive completions polled in batches of {@value #BATCH}.
 * One op = one message sent and received (target: &gt;= 10 M ops/s). {@code threading=INVOKER} runs
 * everything (posting, both NICs' engines, polling) on the benchmark thread; {@code DEDICATED} lets
 * the provider's thread run the NICs beside it, as hardware does ({@code -p threading=DEDICATED}; on a
 * loaded 2-core machine the two spinning threads time-slice, so the default is INVOKER).
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar SendRecvMessageRate -f1 -wi 2 -i 3 -w 1s -r 1s}
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
public class SendRecvMessageRateBenchmark {
    static final int BATCH = 64;
    static final int SIZE = 32;

    /** Who runs the NIC engines: the benchmark thread (invoker) or the provider's thread (dedicated). */
    @Param({"INVOKER"})
    public ThreadingMode threading;

    /**
     * Whether the provider skips the post locks (a verbs thread domain: one posting thread per QP,
     * which this benchmark is); false measures the default thread-safe posting.
     */
    @Param({"false", "true"})
    public boolean threadDomain;

    private VerbsBench bench;
    private final SendWorkRequest send = new SendWorkRequest();
    private final ReceiveWorkRequest recv = new ReceiveWorkRequest();
    private MemoryRegion src;
    private MemoryRegion dst;
    private int received;
    private int sent;
    private final CompletionSink onRecv = this::onRecv;
    private final CompletionSink onSend = this::onSend;

    @Setup(Level.Trial)
    public void setUp() {
        bench = new VerbsBench(BATCH * 2, threading, threadDomain);
        src = bench.pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
        dst = bench.pb.allocateMemory((long) SIZE * BATCH, Access.LOCAL_WRITE);
        send.sge(src, 0, SIZE);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        bench.close();
    }

    private void onRecv(WorkCompletion wc) {
        if (!wc.isSuccess()) {
            throw new IllegalStateException(wc.toString());
        }
        received++;
    }

    private void onSend(WorkCompletion wc) {
        if (!wc.isSuccess()) {
            throw new IllegalStateException(wc.toString());
        }
        sent++;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int sendRecv() {
        for (int i = 0; i < BATCH; i++) {
            bench.qb.postReceive(recv.wrId(i).sge(dst.address() + (long) i * SIZE, SIZE, dst.lkey()));
        }
        for (int i = 0; i < BATCH; i++) {
            bench.qa.postSend(send.wrId(i).signaled(i == BATCH - 1));
        }
        received = 0;
        sent = 0;
        while (received < BATCH || sent == 0) {
            bench.progress();
            bench.cb.poll(BATCH, onRecv);
            bench.ca.poll(BATCH, onSend);
        }
        return received;
    }
}
