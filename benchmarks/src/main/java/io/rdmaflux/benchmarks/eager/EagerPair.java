package io.rdmaflux.benchmarks.eager;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.eager.EagerChannelProvider;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Two INVOKER nodes driven by the calling (benchmark) thread, on the in-JVM fabric ({@code mem}) or the IP
 * fabric over 127.0.0.1 ({@code net}), with the eager ring on or off for every connection; one or more
 * connections from client to server. No progress thread: a figure is the CPU path of the full reactive
 * stack (send Flux, credits, channel, soft NIC, receive Flux and release) plus, on {@code net}, the
 * kernel's loopback TCP; eager and send/receive run the same loop.
 */
final class EagerPair implements AutoCloseable {
    final SoftProvider pa;
    final SoftProvider pb;
    final RdmaNode client;
    final RdmaNode server;
    final List<RdmaConnection> clients = new ArrayList<>();
    final List<RdmaConnection> servers = new ArrayList<>();
    /** The channel providers of the client and the server node (their eager channels' counters). */
    final EagerChannelProvider clientChannels = new EagerChannelProvider();
    final EagerChannelProvider serverChannels = new EagerChannelProvider();
    private final RdmaServer listener;

    EagerPair(String fabric, boolean eager, int bufferBytes, int receiveBuffers, int pollingSet) {
        if ("mem".equals(fabric)) {
            SoftFabric f = SoftFabric.mem("eager-bench-" + System.nanoTime());
            pa = SoftProvider.builder().name("eager-a").fabric(f).threadingMode(ThreadingMode.INVOKER).build();
            pb = SoftProvider.builder().name("eager-b").fabric(f).threadingMode(ThreadingMode.INVOKER).build();
        } else {
            pa = NetProviders.builder(NetTransportConfig.loopback()).name("eager-a").threadingMode(ThreadingMode.INVOKER).build();
            pb = NetProviders.builder(NetTransportConfig.loopback()).name("eager-b").threadingMode(ThreadingMode.INVOKER).build();
        }
        // -Deager.slots=N sizes the rings (experiments; the figures use the default)
        EagerSpec spec = eager ? (Integer.getInteger("eager.slots") != null ? EagerSpec.slots(Integer.getInteger("eager.slots")) : EagerSpec.DEFAULTS)
            : EagerSpec.OFF;
        client = RdmaNode.builder().provider(pa).name("client").bufferBytes(bufferBytes).receiveBuffers(receiveBuffers)
            .sendBuffers(receiveBuffers).sendQueue(64).threadingMode(ThreadingMode.INVOKER).driveProvider(true)
            .channelProvider(clientChannels).eager(spec).eagerPollingSet(pollingSet).build();
        server = RdmaNode.builder().provider(pb).name("server").bufferBytes(bufferBytes).receiveBuffers(receiveBuffers)
            .sendBuffers(receiveBuffers).sendQueue(64).threadingMode(ThreadingMode.INVOKER).driveProvider(true)
            .channelProvider(serverChannels).eager(spec).eagerPollingSet(pollingSet).build();
        listener = server.bind("mem".equals(fabric) ? new PortAddress("mem", pb.devices().get(0).name(), 0) : new PortAddress("net", "127.0.0.1", 0));
        listener.accept().subscribe(servers::add);
    }

    /** Opens one more connection and drives both nodes until it is up. */
    RdmaConnection[] connect() {
        int before = servers.size();
        AtomicReference<RdmaConnection> c = new AtomicReference<>();
        AtomicReference<Throwable> err = new AtomicReference<>();
        client.connect(listener.address(), ConnectionSpec.defaults()).subscribe(c::set, err::set);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while ((c.get() == null || servers.size() == before) && err.get() == null) {
            drive();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("connect timed out");
            }
        }
        if (err.get() != null) {
            throw new IllegalStateException("connect failed", err.get());
        }
        for (int i = 0; i < 2000; i++) {
            drive();
        }
        return new RdmaConnection[] {c.get(), servers.get(servers.size() - 1)};
    }

    /** One duty cycle of both nodes (each drives its provider). @return work done */
    int drive() {
        return client.invoke() + server.invoke();
    }

    /** The server side echoes every message back with a copy of its bytes. */
    static void echo(RdmaConnection server) {
        server.send(server.receive().map(m -> {
            RdmaMessage r = RdmaMessage.of(m.toByteArray());
            m.release();
            return r;
        })).subscribe();
    }

    /** A unicast sink the client sends from, one message at a time. */
    static Sinks.Many<RdmaMessage> sender(RdmaConnection client) {
        Sinks.Many<RdmaMessage> sink = Sinks.many().unicast().onBackpressureBuffer();
        client.send(sink.asFlux()).subscribe();
        return sink;
    }

    static Flux<RdmaMessage> batch(int count, byte[] payload) {
        return Flux.range(0, count).map(i -> RdmaMessage.of(payload));
    }

    @Override
    public void close() {
        listener.close();
        for (RdmaConnection c : clients) {
            c.close();
        }
        client.close();
        server.close();
        pa.close();
        pb.close();
    }
}
