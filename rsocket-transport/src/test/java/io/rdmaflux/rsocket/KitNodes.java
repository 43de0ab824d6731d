package io.rdmaflux.rsocket;

import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * A client and a server node on two soft providers (INVOKER mode, driven by the nodes), on the in-JVM
 * fabric or on the IP fabric over 127.0.0.1, with {@code rails} ports each; closed together.
 */
final class KitNodes implements AutoCloseable {
    private static final AtomicInteger IDS = new AtomicInteger();
    final SoftProvider clientProvider;
    final SoftProvider serverProvider;
    final RdmaNode client;
    final RdmaNode server;
    /** Where the server binds (service 0: a free one). */
    final PortAddress bindAddress;

    private KitNodes(SoftProvider pa, SoftProvider pb, String fabric, String host, int rails, ThreadingMode mode,
                     UnaryOperator<RdmaNode.Builder> configure) {
        clientProvider = pa;
        serverProvider = pb;
        int[] ports = new int[rails];
        for (int r = 0; r < rails; r++) {
            ports[r] = r + 1;
        }
        RdmaNode c = null;
        try {
            c = configure.apply(RdmaNode.builder().provider(pa).name(pa.name()).ports(ports).threadingMode(mode)).build();
            server = configure.apply(RdmaNode.builder().provider(pb).name(pb.name()).ports(ports).threadingMode(mode)).build();
        } catch (RuntimeException | Error e) {
            if (c != null) {
                c.close();
            }
            pa.close();
            pb.close();
            throw e;
        }
        client = c;
        bindAddress = new PortAddress(fabric, host, 0);
    }

    /** On the in-JVM fabric. */
    static KitNodes mem(int rails, ThreadingMode mode, UnaryOperator<RdmaNode.Builder> configure) {
        int id = IDS.incrementAndGet();
        SoftFabric fabric = SoftFabric.mem("rsocket-" + id);
        SoftProvider pa = SoftProvider.builder().name("rsocket-client" + id).fabric(fabric).threadingMode(ThreadingMode.INVOKER)
            .portsPerDevice(rails).build();
        SoftProvider pb = SoftProvider.builder().name("rsocket-server" + id).fabric(fabric).threadingMode(ThreadingMode.INVOKER)
            .portsPerDevice(rails).build();
        return new KitNodes(pa, pb, "mem", pb.devices().get(0).name(), rails, mode, configure);
    }

    /** On the IP fabric over 127.0.0.1 (RC over TCP), one loopback address per rail. */
    static KitNodes net(int rails, ThreadingMode mode, UnaryOperator<RdmaNode.Builder> configure) {
        int id = IDS.incrementAndGet();
        NetTransportConfig.Builder cfg = NetTransportConfig.builder();
        for (int r = 0; r < rails; r++) {
            cfg.address("127.0.0.1");
        }
        NetTransportConfig config = cfg.build();
        SoftProvider pa = NetProviders.builder(config).name("rsocket-net-client" + id).threadingMode(ThreadingMode.INVOKER).build();
        SoftProvider pb = NetProviders.builder(config).name("rsocket-net-server" + id).threadingMode(ThreadingMode.INVOKER).build();
        return new KitNodes(pa, pb, "net", "127.0.0.1", rails, mode, configure);
    }

    @Override
    public void close() {
        try {
            client.close();
        } finally {
            try {
                server.close();
            } finally {
                clientProvider.close();
                serverProvider.close();
            }
        }
    }
}
