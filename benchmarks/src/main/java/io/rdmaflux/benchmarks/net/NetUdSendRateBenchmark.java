package io.rdmaflux.benchmarks.net;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WrOpcode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
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
 * UD SEND rate of 4 KiB datagrams over the IP fabric on loopback against a raw
 * {@link DatagramChannel} sending the same datagrams, in the same run. The UD side posts
 * {@value #BATCH} sends (the last signaled; a UD send completes when its datagram leaves) and
 * polls for the completion; the reference calls {@code send} {@value #BATCH} times. Both send to a
 * socket that one thread drains (the receiving NIC's engine thread; a reader thread), so each side
 * uses two threads. Figure: {@code udSend / datagramChannel} ops/s (target &gt;= 0.80).
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar NetUdSendRate}
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
public class NetUdSendRateBenchmark {
    static final int SIZE = 4096;
    static final int BATCH = 64;

    /** The soft provider side. */
    @State(Scope.Thread)
    public static class Ud {
        NetBench bench;
        QueuePair qa;
        final SendWorkRequest[] wrs = new SendWorkRequest[BATCH];

        @Setup(Level.Trial)
        public void setUp() {
            bench = new NetBench(ThreadingMode.DEDICATED);
            qa = bench.pa.createQueuePair(bench.attrs(QpType.UD, true).build());
            QueuePair qb = bench.pb.createQueuePair(bench.attrs(QpType.UD, false).build());
            for (QueuePair q : new QueuePair[] {qa, qb}) {
                q.init();
                q.readyToReceive();
                q.readyToSend();
            }
            MemoryRegion src = bench.pa.allocateMemory(SIZE, Access.LOCAL_WRITE);
            AddressHandle ah = bench.pa.createAddressHandle(bench.a.devices().get(0).port(1), bench.b.devices().get(0).port(1).address());
            for (int i = 0; i < BATCH; i++) {
                wrs[i] = new SendWorkRequest().wrId(i).opcode(WrOpcode.SEND).sge(src, 0, SIZE)
                    .ud(ah, qb.qpNumber(), qb.attributes().qkey()).signaled(i == BATCH - 1);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            bench.close();
        }
    }

    /** The raw side: a datagram channel and a reader thread draining the target socket. */
    @State(Scope.Thread)
    public static class Raw {
        DatagramChannel sender;
        DatagramChannel receiver;
        InetSocketAddress target;
        Thread readerThread;
        final ByteBuffer out = ByteBuffer.allocateDirect(SIZE);

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            receiver = DatagramChannel.open();
            receiver.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
            receiver.bind(new InetSocketAddress("127.0.0.1", 0));
            receiver.configureBlocking(false);
            target = (InetSocketAddress) receiver.getLocalAddress();
            sender = DatagramChannel.open();
            sender.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
            sender.configureBlocking(false);
            readerThread = new Thread(this::drain, "datagram-reader");
            readerThread.setDaemon(true);
            readerThread.start();
        }

        private void drain() {
            ByteBuffer in = ByteBuffer.allocateDirect(65536);
            try {
                while (receiver.isOpen()) {
                    in.clear();
                    if (receiver.receive(in) == null) {
                        Thread.onSpinWait();
                    }
                }
            } catch (IOException closed) {
                // the trial is over
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            receiver.close();
            sender.close();
            readerThread.join(5_000);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int udSend(Ud s) {
        for (int i = 0; i < BATCH; i++) {
            s.qa.postSend(s.wrs[i]);
        }
        return s.bench.awaitOneCompletion();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int datagramChannel(Raw s) throws IOException {
        int sent = 0;
        for (int i = 0; i < BATCH; i++) {
            s.out.clear();
            sent += s.sender.send(s.out, s.target);
        }
        return sent;
    }
}
