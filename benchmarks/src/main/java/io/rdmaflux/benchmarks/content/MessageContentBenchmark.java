package io.rdmaflux.benchmarks.content;

import io.rdmaflux.core.RdmaMessage;
import net.openhft.chronicle.bytes.Bytes;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The message content APIs against each other (issue 18): filling a send slot through
 * {@code RdmaMessage.write(length, Writer)} (Agrona {@code MutableDirectBuffer}) vs
 * {@code RdmaMessage.write(length, BytesWriter)} (Chronicle {@code Bytes}), and reading a message of
 * off-heap memory through {@code content()} (Agrona {@code DirectBuffer}) vs {@code bytes()} (Chronicle
 * {@code Bytes}), for 32 B and 4 KiB messages. The record is {@code size / 8} longs, written and read
 * one by one, as a marshaller of a flat record does. A fill op creates the message and has it write
 * itself into an off-heap slot ({@code writeTo}, what the send pipeline calls); a read op takes the view
 * of an off-heap message and sums its longs.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar 'content.MessageContent' -f 1 -wi 3 -w 1 -i 5 -r 1}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "-Dchronicle.analytics.disable=true"})
public class MessageContentBenchmark {
    @Param({"32", "4096"})
    public int size;

    private UnsafeBuffer slot;
    private RdmaMessage received;
    private int longs;

    private final RdmaMessage.Writer agronaWriter = (buffer, offset, length) -> {
        for (int i = 0, at = offset; i < length; i += 8, at += 8) {
            buffer.putLong(at, i);
        }
    };

    private final RdmaMessage.BytesWriter chronicleWriter = bytes -> {
        for (int i = 0; i < longs; i++) {
            bytes.writeLong(i * 8L);
        }
    };

    /** One Chronicle view kept and re-pointed per op: the floor of Chronicle's access cost, without the view's creation. */
    private net.openhft.chronicle.bytes.PointerBytesStore reusedStore;
    private Bytes<Void> reusedBytes;
    private long receivedAddress;

    @Setup
    public void setup() {
        longs = size / 8;
        slot = new UnsafeBuffer(ByteBuffer.allocateDirect(size + 64));
        ByteBuffer memory = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < longs; i++) {
            memory.putLong(i * 8, i * 8L);
        }
        received = RdmaMessage.of(memory);
        receivedAddress = received.content().addressOffset();
        reusedStore = net.openhft.chronicle.bytes.BytesStore.nativePointer();
        reusedStore.set(receivedAddress, size);
        reusedBytes = reusedStore.bytesForRead();
    }

    @TearDown
    public void tearDown() {
        received.release();
        reusedBytes.releaseLast();
    }

    @Benchmark
    public long agronaFill() {
        RdmaMessage m = RdmaMessage.write(size, agronaWriter);
        m.writeTo(slot, 16);
        m.release();
        return slot.getLong(16 + size - 8);
    }

    @Benchmark
    public long chronicleFill() {
        RdmaMessage m = RdmaMessage.write(size, chronicleWriter);
        m.writeTo(slot, 16);
        m.release();
        return slot.getLong(16 + size - 8);
    }

    @Benchmark
    public long agronaRead() {
        DirectBuffer c = received.content();
        long sum = 0;
        for (int i = 0, n = received.lengthBytes(); i < n; i += 8) {
            sum += c.getLong(i);
        }
        return sum;
    }

    @Benchmark
    public long chronicleRead() {
        Bytes<?> b = received.bytes();
        long sum = 0;
        for (int i = 0; i < longs; i++) {
            sum += b.readLong();
        }
        return sum;
    }

    @Benchmark
    public long chronicleReadReusedView() {
        reusedStore.set(receivedAddress, size);
        Bytes<Void> b = reusedBytes;
        b.readPositionRemaining(0, size);
        long sum = 0;
        for (int i = 0; i < longs; i++) {
            sum += b.readLong();
        }
        return sum;
    }
}
