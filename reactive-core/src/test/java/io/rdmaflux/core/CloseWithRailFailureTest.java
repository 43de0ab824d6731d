package io.rdmaflux.core;

import io.rdmaflux.verbs.PortState;
import io.rdmaflux.verbs.soft.SoftPort;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.Arguments;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rail dying while a graceful close is under way, at many points of it (before the sender's CLOSE,
 * between the sides' CLOSEs, after one side's last frame), by either side's port: it fails over like a
 * rail dying mid-stream, every message arrives once, and both closes complete without error. Two
 * faults this found: a side that had sent its CLOSE counted no rail as usable any more (they carry only
 * control frames then) and ended the connection on the first rail failure; and a side whose peer's
 * CLOSE was lost on a dead rail, after the peer's last frame, waited for it forever (its own QP on that
 * rail, idle, saw nothing wrong; it now probes the rails the peer's CLOSE is missing on).
 */
class CloseWithRailFailureTest {
    static Stream<Arguments> cases() {
        List<Arguments> c = new ArrayList<>();
        for (String side : List.of("client", "server")) {
            for (int rail = 0; rail < 2; rail++) {
                for (int passes : new int[] {0, 1, 2, 3, 5, 8, 13, 20, 30, 45, 70}) {
                    c.add(Arguments.of(side, rail, passes));
                }
            }
        }
        return c.stream();
    }

    @ParameterizedTest(name = "kill rail {1} on the {0} side {2} passes after close()")
    @MethodSource("cases")
    void aRailFailingDuringAGracefulCloseFailsOverAndTheCloseCompletes(String side, int killed, int passes) {
        try (InvokerPair p = InvokerPair.open(2, ConnectionSpec.rails(2), b -> b.bufferBytes(1024).receiveBuffers(8))) {
            int n = 60;
            List<Integer> psns = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                psns.add(m.psn());
                m.release();
            });
            AtomicReference<Throwable> sendError = new AtomicReference<>();
            AtomicBoolean sent = new AtomicBoolean();
            p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(new byte[600]))).subscribe(null, sendError::set, () -> sent.set(true));
            p.pass();
            p.pass();
            p.client.close();
            for (int i = 0; i < passes; i++) {
                p.pass();
            }
            SoftPort port = (SoftPort) (side.equals("server") ? p.soft.b() : p.soft.a()).devices().get(0).port(killed + 1);
            port.setState(PortState.DOWN);
            AtomicReference<Throwable> clientClose = new AtomicReference<>();
            AtomicReference<Throwable> serverClose = new AtomicReference<>();
            AtomicBoolean clientClosed = new AtomicBoolean();
            AtomicBoolean serverClosed = new AtomicBoolean();
            p.client.onClose().subscribe(null, clientClose::set, () -> clientClosed.set(true));
            p.server.onClose().subscribe(null, serverClose::set, () -> serverClosed.set(true));
            p.server.close();
            try {
                p.runUntil(() -> (clientClosed.get() || clientClose.get() != null) && (serverClosed.get() || serverClose.get() != null));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\n" + ConnectionProbe.describe(p.client) + "\n"
                    + ConnectionProbe.describe(p.server) + "\ndelivered " + psns.size(), e);
            }
            assertNull(sendError.get(), () -> "send\n" + ConnectionProbe.describe(p.client) + "\n" + ConnectionProbe.describe(p.server));
            assertNull(clientClose.get(), "client close");
            assertNull(serverClose.get(), "server close");
            assertTrue(sent.get());
            assertEquals(n, psns.size());
        }
    }
}
