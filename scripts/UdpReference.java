import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Arrays;

/**
 * Raw java.nio DatagramChannel over loopback UDP in one JVM, the floor the reliable-UD message rate of
 * {@code bench msg-rate --fabric net --transport ud} is read against (issue 14): OSU msg-rate's pattern, as the
 * bench CLI runs it: the sender sends WINDOW datagrams of SIZE bytes, the receiver thread answers one 1-byte
 * acknowledgement after the window's last one, ITERATIONS windows timed after ITERATIONS/10 untimed. Blocking
 * channels, 4 MiB socket buffers; a lost window end is resent after 200 ms (counted, printed). Prints the bench
 * CLI's msg-rate row format:
 *
 *   java scripts/UdpReference.java SIZE[,SIZE...] ITERATIONS WINDOW   "# Size  MB/s  Messages/s" rows
 */
public final class UdpReference {
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            throw new IllegalArgumentException("usage: SIZES ITERATIONS WINDOW, e.g. 4096 2000 64");
        }
        int[] sizes = Arrays.stream(args[0].split(",")).mapToInt(s -> Integer.parseInt(s.replace("k", "")) * (s.endsWith("k") ? 1024 : 1)).toArray();
        int iterations = Integer.parseInt(args[1]);
        int window = Integer.parseInt(args[2]);
        int max = Arrays.stream(sizes).max().orElse(1);
        try (DatagramChannel rx = DatagramChannel.open(); DatagramChannel tx = DatagramChannel.open()) {
            for (DatagramChannel c : new DatagramChannel[] {rx, tx}) {
                c.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
                c.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
            }
            rx.bind(new InetSocketAddress("127.0.0.1", 0));
            tx.bind(new InetSocketAddress("127.0.0.1", 0));
            rx.connect(tx.getLocalAddress());
            tx.connect(rx.getLocalAddress());
            Thread peer = new Thread(() -> serve(rx, max), "udp-reference-peer");
            peer.setDaemon(true);
            peer.start();
            tx.socket().setSoTimeout(200);
            ByteBuffer buf = ByteBuffer.allocateDirect(max);
            byte[] ackArray = new byte[16];
            java.net.DatagramPacket ack = new java.net.DatagramPacket(ackArray, ackArray.length);
            long resent = 0;
            System.out.println("# Size                  MB/s        Messages/s");
            for (int size : sizes) {
                long t0 = 0;
                for (int it = -iterations / 10; it < iterations; it++) {
                    if (it == 0) {
                        t0 = System.nanoTime();
                    }
                    for (int m = 0; m < window; m++) {
                        buf.clear().limit(size);
                        buf.put(0, (byte) (m == window - 1 ? 1 : 0));
                        tx.write(buf);
                    }
                    while (true) {
                        try {
                            tx.socket().receive(ack);
                            break;
                        } catch (java.net.SocketTimeoutException e) {
                            resent++;
                            buf.clear().limit(size);
                            buf.put(0, (byte) 1);
                            tx.write(buf);
                        }
                    }
                }
                double s = (System.nanoTime() - t0) / 1e9;
                double msgs = (double) iterations * window / s;
                System.out.printf("%-16d %13.2f %17.0f%n", size, msgs * size / 1e6, msgs);
            }
            System.out.println("# window ends resent after a 200 ms timeout: " + resent);
        }
    }

    private static void serve(DatagramChannel rx, int max) {
        ByteBuffer in = ByteBuffer.allocateDirect(max);
        ByteBuffer ack = ByteBuffer.allocateDirect(1);
        try {
            while (true) {
                in.clear();
                rx.read(in);
                if (in.get(0) == 1) {
                    ack.clear();
                    rx.write(ack);
                }
            }
        } catch (java.io.IOException e) {
            // closed
        }
    }
}
