package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.tck.RealTimeProviderPair;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.agrona.concurrent.SystemNanoClock;

/**
 * The TCK fixture of the ucx provider in "remote" mode: two INVOKER providers with {@code cm=tcp},
 * each with its own UCX directory and contexts, so host A can reach host B's device only through
 * what the TCP connection manager's exchange told it, as between two processes. The provider TCK
 * connects queue pairs directly (no connection manager), so the fixture first makes one CM exchange
 * between the hosts ({@link #introduce}), as an application's {@code rdma_cm} exchange precedes its
 * queue pairs' traffic; before it, neither host resolves the other's addresses (checked).
 */
final class UcxRemoteFixture extends RealTimeProviderPair<UcxProvider> {
    UcxRemoteFixture(String tls) {
        super(side -> UcxProvider.builder().name("ucx-remote-" + side).tls(tls).cm(UcxProvider.Cm.TCP).clock(new SystemNanoClock())
            .threadingMode(ThreadingMode.INVOKER).build());
        try {
            if (a.knownDevices() != 1 || b.knownDevices() != 1) {
                throw new AssertionError("cm=tcp providers must start knowing only their own device, but knew "
                    + a.knownDevices() + " and " + b.knownDevices());
            }
            introduce(this, a, b);
        } catch (RuntimeException | AssertionError e) {
            close();
            throw e;
        }
    }

    /**
     * One CM exchange from {@code from}'s device 0 to a listener of {@code to}'s device 0 on loopback,
     * progressed by {@code fx}; afterwards each knows the other's device.
     */
    static void introduce(RealTimeProviderPair<?> fx, UcxProvider from, UcxProvider to) {
        QpEndpoint toEndpoint = new QpEndpoint(to.devices().get(0).port(1).address(), 1, 0, 4096);
        QpEndpoint fromEndpoint = new QpEndpoint(from.devices().get(0).port(1).address(), 1, 0, 4096);
        try (ConnectionManager.Listener l = to.connectionManager().listen(new PortAddress("ucx", "127.0.0.1", 0),
                (peer, request) -> CompletableFuture.completedFuture(new CmParams(List.of(toEndpoint), new byte[0])))) {
            CompletableFuture<CmParams> reply = from.connectionManager().connect(l.address(),
                new CmParams(List.of(fromEndpoint), new byte[0]), 10_000_000_000L);
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (!reply.isDone() && System.nanoTime() - deadline < 0) {
                fx.progress();
            }
            if (!reply.isDone()) {
                throw new AssertionError("the CM exchange between the two cm=tcp providers did not finish in 20 s");
            }
            if (!reply.join().endpoints().equals(List.of(toEndpoint))) {
                throw new AssertionError("the reply's endpoints changed on the way: " + reply.join());
            }
        }
    }
}
