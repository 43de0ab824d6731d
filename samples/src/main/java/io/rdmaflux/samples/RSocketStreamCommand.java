package io.rdmaflux.samples;

import io.netty.buffer.ByteBuf;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.rsocket.RdmaClientTransport;
import io.rdmaflux.rsocket.RdmaDuplexConnection;
import io.rdmaflux.rsocket.RdmaServerChannel;
import io.rdmaflux.rsocket.RdmaServerTransport;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.util.ByteBufPayload;
import io.rsocket.util.DefaultPayload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import reactor.core.publisher.Flux;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code rdmaflux rsocket-stream}: an RSocket request-stream service over rdmaflux, in one JVM, over
 * {@code --rails} rails of the in-JVM fabric (or of the IP fabric on 127.0.0.1). The client asks for
 * {@code --count} payloads of {@code --size} bytes; each carries its sequence number, which the client
 * checks. Prints the rate and the bytes each rail carried (the server connection's subchannels).
 */
@Command(name = "rsocket-stream", mixinStandardHelpOptions = true, sortOptions = false,
    description = "An RSocket request-stream service over rdmaflux rails (rsocket-transport-rdmaflux), in one JVM.")
public final class RSocketStreamCommand implements Callable<Integer> {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Spec
    CommandSpec spec;

    @Option(names = "--rails", paramLabel = "N", description = "Rails (ports) of the connection, 1..16 (default ${DEFAULT-VALUE}).")
    int rails = 2;

    @Option(names = "--count", paramLabel = "N", description = "Payloads to stream, >= 1 (default ${DEFAULT-VALUE}).")
    int count = 200_000;

    @Option(names = "--size", paramLabel = "BYTES", description = "Payload data size in bytes, 8..1048000 (default ${DEFAULT-VALUE}).")
    int size = 1024;

    @Option(names = "--fabric", paramLabel = "FABRIC", description = "mem (in-JVM) or net (RC over TCP on 127.0.0.1) (default ${DEFAULT-VALUE}).")
    String fabric = "mem";

    @Override
    public Integer call() {
        if (rails < 1 || rails > 16) {
            throw new UserError("--rails must be in 1..16 but it was " + rails);
        }
        if (count < 1) {
            throw new UserError("--count must be >= 1 but it was " + count);
        }
        if (size < 8 || size > 1_048_000) {
            throw new UserError("--size must be in 8..1048000 bytes (a frame must fit the 1 MiB frame limit) but it was " + size);
        }
        if (!fabric.equals("mem") && !fabric.equals("net")) {
            throw new UserError("--fabric must be mem or net but it was " + fabric);
        }
        PrintWriter out = spec.commandLine().getOut();
        SoftProvider[] providers = providers();
        int[] ports = new int[rails];
        for (int r = 0; r < rails; r++) {
            ports[r] = r + 1;
        }
        try (RdmaNode serverNode = RdmaNode.builder().provider(providers[1]).name("rsocket-server").ports(ports)
                 .threadingMode(ThreadingMode.SHARED).build();
             RdmaNode clientNode = RdmaNode.builder().provider(providers[0]).name("rsocket-client").ports(ports)
                 .threadingMode(ThreadingMode.SHARED).build()) {
            byte[] data = new byte[size];
            AtomicReference<RdmaDuplexConnection> serverSide = new AtomicReference<>();
            RdmaServerChannel server = RSocketServer.create(SocketAcceptor.forRequestStream(request -> {
                    int n = Integer.parseInt(request.getDataUtf8());
                    request.release();
                    return Flux.range(0, n).map(i -> {
                        ByteBuffer b = ByteBuffer.wrap(data.clone());
                        b.putLong(0, i);
                        return DefaultPayload.create(b);
                    });
                }))
                .interceptors(r -> r.forConnection((type, c) -> {
                    if (c instanceof RdmaDuplexConnection rc) {
                        serverSide.set(rc);
                    }
                    return c;
                }))
                .bind(RdmaServerTransport.create(serverNode, new PortAddress(fabric, host(providers[1]), 0)))
                .block(TIMEOUT);
            RSocket client = RSocketConnector.connectWith(
                RdmaClientTransport.create(clientNode, server.address()).spec(ConnectionSpec.rails(rails))).block(TIMEOUT);
            try {
                long t0 = System.nanoTime();
                long[] expected = {0};
                Long got = client.requestStream(ByteBufPayload.create(Integer.toString(count)))
                    .doOnNext(p -> {
                        ByteBuf d = p.data();
                        long seq = d.getLong(d.readerIndex());
                        p.release();
                        if (seq != expected[0]) {
                            throw new IllegalStateException("payload " + seq + " arrived where " + expected[0] + " was expected");
                        }
                        expected[0]++;
                    })
                    .count().block(TIMEOUT.multipliedBy(4));
                long ns = System.nanoTime() - t0;
                if (got == null || got != count) {
                    throw new UserError("received " + got + " of " + count + " payloads");
                }
                out.printf("streamed %,d payloads of %,d B over %d rail(s) of the %s fabric in %.1f ms: %,.0f payloads/s, %.1f MiB/s, in order%n",
                    count, size, rails, fabric, ns / 1e6, count * 1e9 / ns, (double) count * size * 1e9 / ns / (1 << 20));
                List<SubchannelSnapshot> subchannels = serverSide.get().rdmaConnection().subchannels();
                for (SubchannelSnapshot s : subchannels) {
                    out.printf("  rail %d (%s): %,d bytes sent by the server%n", s.rail(), s.port(), s.bytesSent());
                }
            } finally {
                client.dispose();
                server.dispose();
                client.onClose().block(TIMEOUT);
                RdmaDuplexConnection sc = serverSide.get();
                if (sc != null) {
                    sc.onClose().block(TIMEOUT);
                }
            }
        } finally {
            providers[0].close();
            providers[1].close();
        }
        return 0;
    }

    private SoftProvider[] providers() {
        if (fabric.equals("mem")) {
            SoftFabric f = SoftFabric.mem("rsocket-stream-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
            return new SoftProvider[] {
                SoftProvider.builder().name("client").fabric(f).threadingMode(ThreadingMode.INVOKER).portsPerDevice(rails).build(),
                SoftProvider.builder().name("server").fabric(f).threadingMode(ThreadingMode.INVOKER).portsPerDevice(rails).build()};
        }
        NetTransportConfig.Builder cfg = NetTransportConfig.builder();
        for (int r = 0; r < rails; r++) {
            cfg.address("127.0.0.1");
        }
        NetTransportConfig config = cfg.build();
        return new SoftProvider[] {
            NetProviders.builder(config).name("client").threadingMode(ThreadingMode.INVOKER).build(),
            NetProviders.builder(config).name("server").threadingMode(ThreadingMode.INVOKER).build()};
    }

    private String host(SoftProvider server) {
        return fabric.equals("mem") ? server.devices().get(0).name() : "127.0.0.1";
    }
}
