package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;

import java.util.concurrent.CountDownLatch;

/**
 * A server process for {@link PeerKilledTest}: a node on the IP fabric (loopback) listening at
 * {@code net://127.0.0.1:<port>} (0: any free port), which prints {@code LISTENING <address>} once bound
 * and then receives and releases whatever arrives, until it is killed. Not a test.
 */
public final class ChildServerMain {
    private ChildServerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        int port = Integer.parseInt(args[0]);
        SoftProvider provider = NetProviders.builder(NetTransportConfig.loopback()).name("child-server")
            .threadingMode(ThreadingMode.INVOKER).build();
        RdmaNode node = RdmaNode.builder().provider(provider).name("child-server").build();
        RdmaServer server = node.bind(new PortAddress("net", "127.0.0.1", port));
        server.accept().subscribe(c -> c.receive().subscribe(RdmaMessage::release, e -> { }));
        System.out.println("LISTENING " + server.address());
        System.out.flush();
        new CountDownLatch(1).await();
    }
}
