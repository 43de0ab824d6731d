package io.rdmaflux.benchmarks.net;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import java.time.Duration;
import java.util.function.BiFunction;

/**
 * Two rdmaflux nodes over the soft provider's IP fabric on loopback, one connection between them: the setup the
 * reactive benchmarks of this package share. Each node has its own INVOKER provider ({@code <prefix>-a},
 * {@code <prefix>-b}), which the node drives; {@code node} builds each node from its provider and name
 * ({@code "a"}, {@code "b"}). {@link #close()} closes the connection, the nodes and the providers.
 *
 * @param client the connection at node {@code a} (it connected)
 * @param server the connection at node {@code b} (it accepted)
 */
record NetNodePair(SoftProvider pa, SoftProvider pb, RdmaNode a, RdmaNode b, RdmaConnection client, RdmaConnection server)
    implements AutoCloseable {

    static NetNodePair open(String prefix, BiFunction<SoftProvider, String, RdmaNode> node) {
        NetTransportConfig cfg = NetTransportConfig.loopback();
        SoftProvider pa = NetProviders.builder(cfg).name(prefix + "-a").threadingMode(ThreadingMode.INVOKER).build();
        SoftProvider pb = NetProviders.builder(cfg).name(prefix + "-b").threadingMode(ThreadingMode.INVOKER).build();
        RdmaNode a = node.apply(pa, "a");
        RdmaNode b = node.apply(pb, "b");
        RdmaServer listener = b.bind(new PortAddress("net", "127.0.0.1", 0));
        RdmaConnection client = a.connect(listener.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
        RdmaConnection server = listener.accept().blockFirst(Duration.ofSeconds(10));
        listener.close();
        return new NetNodePair(pa, pb, a, b, client, server);
    }

    @Override
    public void close() {
        client.close();
        a.close();
        b.close();
        pa.close();
        pb.close();
    }
}
