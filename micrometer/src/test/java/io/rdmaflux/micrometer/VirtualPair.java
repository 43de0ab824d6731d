package io.rdmaflux.micrometer;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * Two INVOKER-mode nodes with two rails each on a private in-JVM soft fabric and one virtual clock: the
 * test thread drives everything (no threads, no sleeps); an idle pass advances the clock 1 µs. The
 * connection manager of the in-JVM fabric answers a connect within the subscribing call.
 */
final class VirtualPair implements AutoCloseable {
    static final int MAX_PASSES = 1_000_000;

    /** 2 µs one way, 1 GB/s: virtual time passes while frames cross, so delivery and connect times are not 0. */
    final SoftTwoNodes soft = SoftTwoNodes.create(2, RailConfig.builder().latencyNs(2_000).bandwidthBytesPerSec(1_000_000_000L).build());
    final RdmaNode client = node("mm-client", soft.a());
    final RdmaNode server = node("mm-server", soft.b());
    final RdmaServer listener = server.bind(new PortAddress("mem", soft.b().devices().get(0).name(), 0));
    final AtomicReference<@Nullable RdmaConnection> accepted = new AtomicReference<>();

    VirtualPair() {
        listener.accept().subscribe(accepted::set);
    }

    private RdmaNode node(String name, io.rdmaflux.verbs.soft.SoftProvider p) {
        return RdmaNode.builder().provider(p).name(name).ports(1, 2).threadingMode(ThreadingMode.INVOKER)
            .clock(soft.clock()).driveProvider(false).receiveBuffers(16).qpRetryTimeoutNs(1_000_000).build();
    }

    /** Subscribes to {@code connect}, drives until it and the accept are done, and returns the connection. */
    RdmaConnection connect(Mono<RdmaConnection> connect) {
        AtomicReference<@Nullable RdmaConnection> connected = new AtomicReference<>();
        AtomicReference<@Nullable Throwable> error = new AtomicReference<>();
        connect.subscribe(connected::set, error::set);
        await("connect", () -> (connected.get() != null && accepted.get() != null) || error.get() != null);
        if (error.get() != null) {
            throw new AssertionError("connect failed: " + error.get(), error.get());
        }
        return connected.get();
    }

    RdmaConnection accepted() {
        RdmaConnection c = accepted.get();
        if (c == null) {
            throw new AssertionError("nothing accepted");
        }
        return c;
    }

    int pass() {
        return soft.progress() + client.invoke() + server.invoke();
    }

    void await(String what, BooleanSupplier done) {
        for (int i = 0; i < MAX_PASSES; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (pass() == 0) {
                soft.clock().advance(1_000);
            }
        }
        if (!done.getAsBoolean()) {
            throw new AssertionError("not reached within " + MAX_PASSES + " passes: " + what);
        }
    }

    @Override
    public void close() {
        try {
            listener.close();
            client.close();
            server.close();
        } finally {
            soft.close();
        }
    }
}
