package io.rdmaflux.ud;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.testing.SoftTwoNodes;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

/**
 * Two INVOKER nodes on a private soft fabric whose ports all follow {@code rail} (UD loss, duplication,
 * reordering, corruption, MTU), connected over {@link ChannelKind#RELIABLE_UD} (or another kind); one virtual clock, no threads.
 * A pass that does nothing advances the clock 1 µs. Test-only.
 */
final class UdPair implements AutoCloseable {
    final SoftTwoNodes soft;
    final UdChannelProvider clientProvider;
    final UdChannelProvider serverProvider;
    final RcDrChannelProvider clientDr;
    final RcDrChannelProvider serverDr;
    final RdmaNode clientNode;
    final RdmaNode serverNode;
    final RdmaConnection client;
    final RdmaConnection server;

    UdPair(int rails, RailConfig rail, UdSpec spec, UnaryOperator<RdmaNode.Builder> node) {
        this(rails, rail, spec, ChannelKind.RELIABLE_UD, node);
    }

    /** Connected over {@code kind} on every rail (both nodes offer reliable UD, RC + DR and RC). */
    UdPair(int rails, RailConfig rail, UdSpec spec, ChannelKind kind, UnaryOperator<RdmaNode.Builder> node) {
        this(rails, rail, spec, RcDrSpec.DEFAULTS, kind, node);
    }

    /** As above, the RC + DR rails with {@code drSpec}. */
    UdPair(int rails, RailConfig rail, UdSpec spec, RcDrSpec drSpec, ChannelKind kind, UnaryOperator<RdmaNode.Builder> node) {
        clientDr = new RcDrChannelProvider(drSpec);
        serverDr = new RcDrChannelProvider(drSpec);
        soft = SoftTwoNodes.create(rails, rail);
        int[] ports = new int[rails];
        for (int r = 0; r < rails; r++) {
            ports[r] = r + 1;
        }
        clientProvider = new UdChannelProvider(spec);
        serverProvider = new UdChannelProvider(spec);
        clientNode = node.apply(RdmaNode.builder().provider(soft.a()).name("ud-client").ports(ports).threadingMode(ThreadingMode.INVOKER)
            .clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000).channelProvider(clientProvider).channelProvider(clientDr)).build();
        serverNode = node.apply(RdmaNode.builder().provider(soft.b()).name("ud-server").ports(ports).threadingMode(ThreadingMode.INVOKER)
            .clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000).channelProvider(serverProvider).channelProvider(serverDr)).build();
        RdmaServer listener = serverNode.bind(new PortAddress("mem", soft.b().devices().get(0).name(), 0));
        AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
        AtomicReference<RdmaConnection> connected = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        listener.accept().subscribe(accepted::set);
        clientNode.connect(listener.address(), ConnectionSpec.rails(rails).channelKind(kind))
            .subscribe(connected::set, error::set);
        await(() -> (accepted.get() != null && connected.get() != null) || error.get() != null, 2_000_000);
        listener.close();
        if (error.get() != null) {
            throw new AssertionError("connect failed: " + error.get(), error.get());
        }
        client = connected.get();
        server = accepted.get();
    }

    /** {@code n} random payloads of 1..{@code maxBytes} bytes from {@code seed}. */
    static java.util.List<byte[]> payloads(long seed, int n, int maxBytes) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        java.util.List<byte[]> out = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] b = new byte[1 + r.nextInt(maxBytes)];
            r.nextBytes(b);
            out.add(b);
        }
        return out;
    }

    int pass() {
        return soft.progress() + clientNode.invoke() + serverNode.invoke();
    }

    /** Runs passes until {@code done}, at most {@code maxPasses}. @return whether done */
    boolean await(BooleanSupplier done, int maxPasses) {
        for (int i = 0; i < maxPasses; i++) {
            if (done.getAsBoolean()) {
                return true;
            }
            if (pass() == 0) {
                soft.clock().advance(1_000);
            }
        }
        return done.getAsBoolean();
    }

    @Override
    public void close() {
        try {
            client.close();
            server.close();
            await(() -> client.onClose().toFuture().isDone() && server.onClose().toFuture().isDone(), 200_000);
        } finally {
            clientNode.close();
            serverNode.close();
            soft.close();
        }
    }
}
