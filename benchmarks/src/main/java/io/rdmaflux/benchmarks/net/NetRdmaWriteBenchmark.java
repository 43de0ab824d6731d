package io.rdmaflux.benchmarks.net;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WrOpcode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * RC RDMA WRITE of 1 MiB messages over the IP fabric on loopback against a raw Java NIO TCP stream
 * carrying the same bytes, in the same run. Each invocation moves {@value #BATCH} MiB and waits
 * until the far side has it: the RDMA side posts {@value #BATCH} writes (the last signaled) and
 * polls for the completion, which the responder's acknowledgement triggers after its NIC placed
 * the data; the reference writes {@value #BATCH} MiB on a blocking socket and waits for a one-byte
 * acknowledgement its reader thread sends after reading them all. Both sides use two threads (the
 * benchmark thread sends; one thread receives). Figure: {@code rdmaWrite / nioStream} ops/s
 * (target &gt;= 0.85).
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar NetRdmaWrite}
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "-Dchronicle.analytics.disable=true"})
public class NetRdmaWriteBenchmark {
    static final int SIZE = 1 << 20;
    static final int BATCH = 16;

    /** The soft provider side. */
    @State(Scope.Thread)
    public static class Rdma {
        NetBench bench;
        QueuePair qa;
        final SendWorkRequest[] wrs = new SendWorkRequest[BATCH];

        @Setup(Level.Trial)
        public void setUp() {
            bench = new NetBench(ThreadingMode.DEDICATED);
            QueuePair[] qp = bench.rcPair();
            qa = qp[0];
            MemoryRegion src = bench.pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
            MemoryRegion dst = bench.pb.allocateMemory(SIZE, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            for (int i = 0; i < BATCH; i++) {
                wrs[i] = new SendWorkRequest().wrId(i).opcode(WrOpcode.RDMA_WRITE).sge(src, 0, SIZE)
                    .remoteAddress(dst.address()).rkey(dst.rkey()).signaled(i == BATCH - 1);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            bench.close();
        }
    }

    /** The raw NIO side: a blocking stream and a reader thread that acknowledges every batch. */
    @State(Scope.Thread)
    public static class Nio {
        SocketChannel writer;
        SocketChannel reader;
        Thread readerThread;
        final ByteBuffer out = ByteBuffer.allocateDirect(SIZE);
        final ByteBuffer ack = ByteBuffer.allocateDirect(1);

        @Setup(Level.Trial)
        public void setUp() {
            SocketChannel[] pair = NetBench.tcpPair();
            writer = pair[0];
            reader = pair[1];
            readerThread = new Thread(this::readLoop, "nio-stream-reader");
            readerThread.setDaemon(true);
            readerThread.start();
        }

        private void readLoop() {
            ByteBuffer in = ByteBuffer.allocateDirect(SIZE);
            ByteBuffer one = ByteBuffer.allocateDirect(1);
            long batchBytes = (long) SIZE * BATCH;
            try {
                while (true) {
                    long got = 0;
                    while (got < batchBytes) {
                        in.clear();
                        in.limit((int) Math.min(SIZE, batchBytes - got));
                        int n = reader.read(in);
                        if (n < 0) {
                            return;
                        }
                        got += n;
                    }
                    one.clear();
                    reader.write(one);
                }
            } catch (IOException closed) {
                // the trial is over
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            writer.close();
            reader.close();
            readerThread.join(5_000);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int rdmaWrite(Rdma s) {
        for (int i = 0; i < BATCH; i++) {
            s.qa.postSend(s.wrs[i]);
        }
        return s.bench.awaitOneCompletion();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int nioStream(Nio s) throws IOException {
        for (int i = 0; i < BATCH; i++) {
            s.out.clear();
            while (s.out.hasRemaining()) {
                s.writer.write(s.out);
            }
        }
        s.ack.clear();
        while (s.ack.hasRemaining()) {
            if (s.writer.read(s.ack) < 0) {
                throw new IOException("reader closed");
            }
        }
        return s.ack.get(0);
    }
}
