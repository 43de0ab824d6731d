package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A reporter that throws (a harness failing on the first leak) still hears of every connection's leak
 * at node close; close throws the first throwable with the later ones suppressed. INVOKER mode.
 */
class ThrowingLeakReporterTest {
    private static final int BYTES = 100;

    /** The server receives {@code n} messages on {@code server} from {@code client} and keeps them. */
    private static List<RdmaMessage> receiveAndHold(InvokerPair p, RdmaConnection client, RdmaConnection server, int n) {
        List<RdmaMessage> held = new ArrayList<>();
        server.receive().subscribe(held::add);
        SendOutcome sent = SendOutcome.of(client.send(Flux.range(0, n).map(i -> RdmaMessage.of(new byte[BYTES]))));
        p.runUntil(() -> sent.completed() && held.size() == n);
        return held;
    }

    @Test
    void everyLeakIsReportedWhenTheReporterThrowsAndCloseThrowsTheFirstWithTheRestSuppressed() {
        InvokerPair p = InvokerPair.open();
        RdmaServer second = p.serverNode.bind(new PortAddress("mem", p.soft.b().devices().get(0).name(), 0));
        AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
        AtomicReference<RdmaConnection> connected = new AtomicReference<>();
        second.accept().subscribe(accepted::set);
        p.clientNode.connect(second.address(), ConnectionSpec.defaults()).subscribe(connected::set);
        p.runUntil(() -> accepted.get() != null && connected.get() != null);
        receiveAndHold(p, p.client, p.server, 1);
        receiveAndHold(p, connected.get(), accepted.get(), 2);

        List<RdmaLeakReporter.Leak> seen = new ArrayList<>();
        List<AssertionError> thrown = new ArrayList<>();
        RdmaLeakReporter previous = RdmaLeakReporter.install(leak -> {
            seen.add(leak);
            AssertionError e = new AssertionError("leak " + seen.size());
            thrown.add(e);
            throw e;
        });
        try {
            AssertionError e = assertThrows(AssertionError.class, p.serverNode::close);
            assertEquals(2, seen.size(), "a throwing reporter stopped the reports: " + seen);
            assertEquals(List.of(1, 2), seen.stream().map(RdmaLeakReporter.Leak::messages).sorted().toList());
            assertSame(thrown.get(0), e, "the first throwable is rethrown");
            assertEquals(List.of(thrown.get(1)), List.of(e.getSuppressed()), "the later ones suppressed in it");
        } finally {
            RdmaLeakReporter.install(previous);
            p.close();
        }
    }
}
