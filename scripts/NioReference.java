import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Locale;

/**
 * Raw NIO over loopback TCP in one JVM, the floor the OSU tables of scripts/provider-tables.sh are
 * read against: blocking SocketChannels with TCP_NODELAY, a server thread echoing (latency) or
 * draining and acknowledging (bandwidth), no framing beyond the fixed message size. Prints rows in
 * the bench CLI's formats so the script can put them beside the providers' tables:
 *
 *   java scripts/NioReference.java latency SIZE[,SIZE...] ITERATIONS   "# Size  Latency  p50  p99" rows (µs, one way = RTT/2)
 *   java scripts/NioReference.java bw SIZE[,SIZE...] ITERATIONS WINDOW   "# Size  Bandwidth (MB/s)" rows (10^6 bytes/s)
 *
 * Each size runs ITERATIONS/10 untimed iterations first (JIT and socket buffers).
 */
public final class NioReference {
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            throw new IllegalArgumentException("usage: latency SIZES ITERATIONS | bw SIZES ITERATIONS WINDOW");
        }
        boolean latency = args[0].equals("latency");
        int[] sizes = Arrays.stream(args[1].split(",")).mapToInt(NioReference::size).toArray();
        int iterations = Integer.parseInt(args[2]);
        int window = latency ? 1 : Integer.parseInt(args[3]);
        int max = Arrays.stream(sizes).max().orElse(1);
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            Thread peer = new Thread(() -> serve(server, max, latency, window), "nio-reference-peer");
            peer.setDaemon(true);
            peer.start();
            try (SocketChannel c = SocketChannel.open(server.getLocalAddress())) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ByteBuffer buf = ByteBuffer.allocateDirect(max);
                ByteBuffer ack = ByteBuffer.allocateDirect(1);
                System.out.println(latency ? "# Size          Latency (us)    p50 (us)    p99 (us)" : "# Size      Bandwidth (MB/s)");
                for (int size : sizes) {
                    int warmup = Math.max(1, iterations / 10);
                    phase(c, size, warmup);
                    run(c, buf, ack, size, warmup, latency, window, null);
                    long[] samples = new long[iterations];
                    phase(c, size, iterations);
                    long t0 = System.nanoTime();
                    run(c, buf, ack, size, iterations, latency, window, samples);
                    long elapsed = System.nanoTime() - t0;
                    if (latency) {
                        Arrays.sort(samples);
                        double mean = Arrays.stream(samples).average().orElse(0) / 2000.0;
                        System.out.printf(Locale.ROOT, "%-16d%12.2f%12.2f%12.2f%n", size, mean, samples[iterations / 2] / 2000.0,
                            samples[(int) Math.min(iterations - 1, Math.ceil(iterations * 0.99) - 1)] / 2000.0);
                    } else {
                        System.out.printf(Locale.ROOT, "%-12d%18.2f%n", size, (double) size * iterations * window / (elapsed / 1e9) / 1e6);
                    }
                }
                phase(c, 0, 0);
            }
        }
    }

    private static int size(String s) {
        s = s.trim().toLowerCase(Locale.ROOT);
        if (s.endsWith("k")) {
            return Integer.parseInt(s.substring(0, s.length() - 1)) << 10;
        }
        if (s.endsWith("m")) {
            return Integer.parseInt(s.substring(0, s.length() - 1)) << 20;
        }
        return Integer.parseInt(s);
    }

    /** Tells the peer the next phase: {@code iterations} iterations of {@code size}-byte messages (size 0: done). */
    private static void phase(SocketChannel c, int size, int iterations) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(8).putInt(size).putInt(iterations).flip();
        while (h.hasRemaining()) {
            c.write(h);
        }
    }

    private static void run(SocketChannel c, ByteBuffer buf, ByteBuffer ack, int size, int iterations, boolean latency, int window,
                            long[] samples) throws IOException {
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            for (int w = 0; w < window; w++) {
                writeFully(c, buf, size);
            }
            if (latency) {
                readFully(c, buf, size);
            } else {
                readFully(c, ack, 1);
            }
            if (samples != null) {
                samples[i] = System.nanoTime() - t0;
            }
        }
    }

    /** The peer: per phase, reads each iteration's window of messages and answers with the message (latency) or a 1-byte ACK. */
    private static void serve(ServerSocketChannel server, int max, boolean latency, int window) {
        try (SocketChannel c = server.accept()) {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ByteBuffer buf = ByteBuffer.allocateDirect(max);
            ByteBuffer ack = ByteBuffer.allocateDirect(1);
            ByteBuffer header = ByteBuffer.allocate(8);
            while (true) {
                readFully(c, header, 8);
                int size = header.getInt(0);
                int iterations = header.getInt(4);
                if (size == 0) {
                    return;
                }
                for (int i = 0; i < iterations; i++) {
                    for (int w = 0; w < window; w++) {
                        readFully(c, buf, size);
                    }
                    if (latency) {
                        writeFully(c, buf, size);
                    } else {
                        writeFully(c, ack, 1);
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("nio-reference peer: " + e);
        }
    }

    private static void writeFully(SocketChannel c, ByteBuffer b, int n) throws IOException {
        b.clear().limit(n);
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    private static void readFully(SocketChannel c, ByteBuffer b, int n) throws IOException {
        b.clear().limit(n);
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new IOException("closed");
            }
        }
    }
}
