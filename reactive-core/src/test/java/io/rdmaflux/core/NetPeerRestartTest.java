package io.rdmaflux.core;

import io.rdmaflux.verbs.CmException;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server on the IP fabric (loopback, real time) that dies and comes back on the same TCP port: the
 * client's old connection errors naming the broken stream, and a connect with {@link ConnectRetry}
 * started while the server is down reaches the new one.
 */
class NetPeerRestartTest {
    private static final AtomicInteger IDS = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static SoftProvider provider(String name) {
        return NetProviders.builder(NetTransportConfig.loopback()).name(name + IDS.incrementAndGet())
            .threadingMode(ThreadingMode.INVOKER).build();
    }

    private static RdmaNode node(SoftProvider p, String name) {
        return RdmaNode.builder().provider(p).name(name).qpRetryTimeoutNs(20_000_000).build();
    }

    @Test
    void aServerThatDiesAndComesBackOnItsPortIsReachedByARetryingClient() {
        SoftProvider clientProvider = provider("nr-client");
        RdmaNode client = node(clientProvider, "nr-client");
        SoftProvider serverProvider = provider("nr-server");
        RdmaNode serverNode = node(serverProvider, "nr-server");
        SoftProvider serverProvider2 = null;
        RdmaNode serverNode2 = null;
        try {
            RdmaServer server = serverNode.bind(new PortAddress("net", "127.0.0.1", 0));
            PortAddress address = server.address();
            List<String> got = new CopyOnWriteArrayList<>();
            server.accept().subscribe(c -> c.receive().subscribe(m -> {
                got.add(m.asString());
                m.release();
            }, e -> { }));
            RdmaConnection old = client.connect(address, ConnectionSpec.defaults()).block(WAIT);
            AtomicReference<Throwable> oldReceive = new AtomicReference<>();
            old.receive().subscribe(RdmaMessage::release, oldReceive::set);
            old.send(Flux.range(0, 3).map(i -> RdmaMessage.of("old-" + i))).block(WAIT);

            // the server process dies: its sockets close, nothing else is said
            serverProvider.close();
            Throwable oldError = assertThrows(RuntimeException.class,
                () -> old.send(Flux.range(0, 3).map(i -> RdmaMessage.of("lost-" + i))).block(WAIT));
            RdmaTransportException e = assertInstanceOf(RdmaTransportException.class, oldError);
            assertTrue(e.getMessage().contains("stream") || e.getMessage().contains("retr"), e.getMessage());
            Mono.fromCallable(oldReceive::get).repeatWhenEmpty(r -> r.delayElements(Duration.ofMillis(5))).block(WAIT);
            assertInstanceOf(RdmaException.class, oldReceive.get());

            // nothing listens now: a plain connect is refused, and says so
            Throwable refused = assertThrows(RuntimeException.class, () -> client.connect(address, ConnectionSpec.defaults()).block(WAIT));
            assertEquals(CmException.Reason.REFUSED, assertInstanceOf(CmException.class, refused).reason());

            // a retrying connect started now reaches the server once it is back on the same port
            var again = client.connect(address, ConnectionSpec.defaults()
                .connectRetry(ConnectRetry.backoff(200, 5_000_000).maxBackoffNs(50_000_000))).toFuture();
            Mono.delay(Duration.ofMillis(100)).block();
            assertTrue(!again.isDone(), "still retrying");
            serverProvider2 = provider("nr-server-again");
            serverNode2 = node(serverProvider2, "nr-server-again");
            RdmaServer server2 = serverNode2.bind(address);
            assertEquals(address, server2.address());
            List<String> got2 = new CopyOnWriteArrayList<>();
            server2.accept().subscribe(c -> c.receive().subscribe(m -> {
                got2.add(m.asString());
                m.release();
            }, x -> { }));
            RdmaConnection fresh = Mono.fromFuture(again).block(WAIT);
            fresh.receive().subscribe(RdmaMessage::release);
            fresh.send(Flux.range(0, 3).map(i -> RdmaMessage.of("new-" + i))).block(WAIT);
            Mono.fromCallable(() -> got2.size() == 3 ? true : null).repeatWhenEmpty(r -> r.delayElements(Duration.ofMillis(5))).block(WAIT);
            assertEquals(List.of("new-0", "new-1", "new-2"), got2);
            assertEquals(List.of("old-0", "old-1", "old-2"), got);
            fresh.close();
            fresh.onClose().block(WAIT);
        } finally {
            if (serverNode2 != null) {
                serverNode2.close();
                serverProvider2.close();
            }
            serverNode.close();
            client.close();
            clientProvider.close();
        }
    }
}
