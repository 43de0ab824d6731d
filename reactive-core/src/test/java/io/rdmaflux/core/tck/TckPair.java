package io.rdmaflux.core.tck;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/** A DEDICATED-mode connected pair for the Reactive Streams TCK, which runs on real threads and timeouts. */
final class TckPair implements AutoCloseable {
    private static final AtomicInteger IDS = new AtomicInteger();
    final SoftProvider pa;
    final SoftProvider pb;
    final RdmaNode a;
    final RdmaNode b;
    final RdmaConnection client;
    final RdmaConnection server;

    TckPair() {
        int id = IDS.incrementAndGet();
        SoftFabric fabric = SoftFabric.mem("tck-" + id);
        pa = SoftProvider.builder().name("tcka" + id).fabric(fabric).build();
        pb = SoftProvider.builder().name("tckb" + id).fabric(fabric).build();
        a = RdmaNode.builder().provider(pa).name("tcka" + id).receiveBuffers(64).bufferBytes(256).build();
        b = RdmaNode.builder().provider(pb).name("tckb" + id).receiveBuffers(64).bufferBytes(256).build();
        RdmaServer listener = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
        client = a.connect(listener.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
        server = listener.accept().blockFirst(Duration.ofSeconds(10));
    }

    @Override
    public void close() {
        a.close();
        b.close();
        pa.close();
        pb.close();
    }
}
