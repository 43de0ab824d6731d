package io.rdmaflux.benchmarks.net;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.SoftProvider;
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
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Round trip of a 64-byte RC SEND over the IP fabric on loopback against a raw NIO TCP ping-pong,
 * both busy-polling, in the same run. RC: the benchmark thread posts a SEND and drives host a
 * (INVOKER) until the echo's receive completes; an echo thread drives host b (INVOKER), and
 * answers each receive with a SEND. Raw: the benchmark thread writes 64 bytes on a non-blocking
 * socket and spins on {@code read} until 64 come back; an echo thread spins on {@code read} and
 * writes them back. Two threads each. Figure: p50 of {@code rcSend / nioPingPong} (sample mode;
 * target &lt;= 1.2).
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar NetPingPong}
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "-Dchronicle.analytics.disable=true"})
public class NetPingPongBenchmark {
    static final int SIZE = 64;
    static final int RECEIVES = 64;

    /** The soft provider side. */
    @State(Scope.Thread)
    public static class Rc {
        NetBench bench;
        QueuePair qa;
        QueuePair qb;
        MemoryRegion ma;
        MemoryRegion mb;
        SendWorkRequest ping;
        SendWorkRequest pong;
        final ReceiveWorkRequest recvA = new ReceiveWorkRequest();
        final ReceiveWorkRequest recvB = new ReceiveWorkRequest();
        volatile boolean running = true;
        Thread echo;
        boolean got;
        /** Sinks held in fields: a lambda capturing state, written in the loop, would be a new object per pass. */
        final CompletionSink onPong = wc -> {
            if (wc.opcode() == WcOpcode.RECV) {
                got = true;
            }
        };
        final CompletionSink onPing = wc -> {
            if (wc.opcode() == WcOpcode.RECV) {
                qb.postReceive(recvB);
                qb.postSend(pong);
            }
        };

        @Setup(Level.Trial)
        public void setUp() {
            bench = new NetBench(ThreadingMode.INVOKER);
            QueuePair[] qp = bench.rcPair();
            qa = qp[0];
            qb = qp[1];
            ma = bench.pa.allocateMemory(2 * SIZE, Access.LOCAL_WRITE);
            mb = bench.pb.allocateMemory(2 * SIZE, Access.LOCAL_WRITE);
            ping = new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).sge(ma, 0, SIZE).signaled(false);
            pong = new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(mb, 0, SIZE).signaled(false);
            recvA.wrId(3).sge(ma, SIZE, SIZE);
            recvB.wrId(4).sge(mb, SIZE, SIZE);
            for (int i = 0; i < RECEIVES; i++) {
                qa.postReceive(recvA);
                qb.postReceive(recvB);
            }
            echo = new Thread(this::echoLoop, "rc-echo");
            echo.setDaemon(true);
            echo.start();
        }

        private void echoLoop() {
            SoftProvider b = bench.b;
            while (running) {
                b.progress(b.clock().nanoTime());
                bench.cb.poll(16, onPing);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws InterruptedException {
            running = false;
            echo.join(5_000);
            bench.close();
        }
    }

    /** The raw side: a non-blocking TCP pair and an echo thread, both spinning on read. */
    @State(Scope.Thread)
    public static class Nio {
        SocketChannel client;
        SocketChannel server;
        final ByteBuffer out = ByteBuffer.allocateDirect(SIZE);
        final ByteBuffer in = ByteBuffer.allocateDirect(SIZE);
        volatile boolean running = true;
        Thread echo;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            SocketChannel[] pair = NetBench.tcpPair();
            client = pair[0];
            server = pair[1];
            client.configureBlocking(false);
            server.configureBlocking(false);
            echo = new Thread(this::echoLoop, "nio-echo");
            echo.setDaemon(true);
            echo.start();
        }

        private void echoLoop() {
            ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
            try {
                while (running) {
                    if (server.read(b) < 0) {
                        return;
                    }
                    if (!b.hasRemaining()) {
                        b.flip();
                        while (b.hasRemaining()) {
                            server.write(b);
                        }
                        b.clear();
                    }
                }
            } catch (IOException closed) {
                // the trial is over
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            running = false;
            echo.join(5_000);
            client.close();
            server.close();
        }
    }

    @Benchmark
    public boolean rcSend(Rc s) {
        s.qa.postSend(s.ping);
        s.got = false;
        while (!s.got) {
            s.bench.progressA();
            s.bench.ca.poll(4, s.onPong);
        }
        s.qa.postReceive(s.recvA);
        return s.got;
    }

    @Benchmark
    public int nioPingPong(Nio s) throws IOException {
        s.out.clear();
        while (s.out.hasRemaining()) {
            s.client.write(s.out);
        }
        s.in.clear();
        while (s.in.hasRemaining()) {
            if (s.client.read(s.in) < 0) {
                throw new IOException("echo closed");
            }
        }
        return s.in.get(0);
    }
}
