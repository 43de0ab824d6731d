import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Locale;

/**
 * Plain TCP over one rail, the ceiling an RC-over-TCP stream can reach on it: what
 * scripts/striping-netns-bench.sh measures each tbf-shaped rail with before the rdmaflux runs.
 * Run with the JDK's source launcher (no build):
 *
 *   java scripts/TcpReference.java receive HOST:PORT       prints "listening", then after the sender
 *                                                          closed: "tcp MiB/s <steady> bytes <n>"
 *   java scripts/TcpReference.java send HOST:PORT SECONDS  writes 1 MiB buffers for SECONDS
 *
 * The receiver's rate is over the bytes read after the first 0.5 s (slow start and socket buffer
 * autotuning excluded) up to the last byte, kernel defaults for everything (autotuned buffers, the
 * namespace's congestion control), so it is what the link carries for a TCP payload stream.
 */
public final class TcpReference {
    private static final long WARM_UP_NS = 500_000_000L;

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            throw new IllegalArgumentException("usage: receive HOST:PORT | send HOST:PORT SECONDS");
        }
        int colon = args[1].lastIndexOf(':');
        InetSocketAddress at = new InetSocketAddress(args[1].substring(0, colon), Integer.parseInt(args[1].substring(colon + 1)));
        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
        if (args[0].equals("receive")) {
            try (ServerSocketChannel server = ServerSocketChannel.open()) {
                server.bind(at);
                System.out.println("listening at " + at);
                System.out.flush();
                try (SocketChannel ch = server.accept()) {
                    long first = 0, mark = 0, markBytes = 0, bytes = 0, last = 0;
                    int n;
                    while ((n = ch.read(buf.clear())) >= 0) {
                        long now = System.nanoTime();
                        if (first == 0) {
                            first = now;
                        }
                        bytes += n;
                        last = now;
                        if (mark == 0 && now - first >= WARM_UP_NS) {
                            mark = now;
                            markBytes = bytes;
                        }
                    }
                    if (mark == 0 || last <= mark) {
                        throw new IllegalStateException("the sender stopped within the 0.5 s warm-up; send for longer");
                    }
                    double mibps = (bytes - markBytes) / ((last - mark) / 1e9) / (1 << 20);
                    System.out.println(String.format(Locale.ROOT, "tcp MiB/s %.2f bytes %d", mibps, bytes));
                }
            }
        } else if (args[0].equals("send") && args.length == 3) {
            long until = System.nanoTime() + (long) (Double.parseDouble(args[2]) * 1e9);
            try (SocketChannel ch = SocketChannel.open(at)) {
                while (System.nanoTime() < until) {
                    buf.clear();
                    while (buf.hasRemaining()) {
                        ch.write(buf);
                    }
                }
            }
        } else {
            throw new IllegalArgumentException("usage: receive HOST:PORT | send HOST:PORT SECONDS");
        }
    }
}
