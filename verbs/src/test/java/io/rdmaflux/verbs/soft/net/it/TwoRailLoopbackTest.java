package io.rdmaflux.verbs.soft.net.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The two-rail integration pair in one JVM over loopback (two ports per host on 127.0.0.1), so the
 * normal test run keeps it working; scripts/two-host-it.sh runs the same mains in two network
 * namespaces over two shaped veth rails.
 */
@ExtendWith(NoLeaksExtension.class)
class TwoRailLoopbackTest {
    @Test
    void senderAndReceiverMoveAndVerifyDataOverTwoRails() throws Exception {
        int port;
        try (ServerSocketChannel s = ServerSocketChannel.open()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            port = ((InetSocketAddress) s.getLocalAddress()).getPort();
        }
        String[] common = {"--addresses", "127.0.0.1,127.0.0.1", "--bytes-per-rail", String.valueOf(2 << 20), "--sends-per-rail", "16",
            "--timeout-s", "30"};
        // UD may drop: each rail's 256 datagrams of 2 KiB leave in one burst, and how many the receiver's
        // socket holds until its NIC thread gets the CPU is up to the kernel. With Linux's default
        // net.core.rmem_max (208 KiB, so 416 KiB of queue) 97 of them fit even if that thread never runs
        // during the burst; 25 % stays below that, so only broken UD (not a loaded machine) fails it
        String[] receiverOnly = {"--listen", "127.0.0.1:" + port, "--ud-min-fraction", "0.25"};
        AtomicInteger receiverExit = new AtomicInteger(-1);
        Thread receiver = new Thread(() -> receiverExit.set(TwoRailReceiver.run(concat(receiverOnly, common))), "it-receiver");
        receiver.start();
        int senderExit = TwoRailSender.run(concat(new String[] {"--connect", "127.0.0.1:" + port}, common));
        receiver.join(40_000);
        assertFalse(receiver.isAlive(), "receiver finished");
        assertEquals(0, senderExit, "sender exit code");
        assertEquals(0, receiverExit.get(), "receiver exit code");
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = new String[a.length + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
