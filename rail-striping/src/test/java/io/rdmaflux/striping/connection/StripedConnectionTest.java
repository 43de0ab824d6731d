package io.rdmaflux.striping.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.striping.MultiplexingPolicies;
import io.rdmaflux.striping.Rails;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftPort;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * End to end: {@code ConnectionSpec.rails(2).striping(...)} with this module's policies, over the
 * soft provider's in-JVM fabric with two shaped rails (1 GB/s and 250 MB/s), INVOKER mode, virtual
 * time.
 */
class StripedConnectionTest {
    static final long GB = 1_000_000_000L;
    static final int N = 120;
    static final int SIZE = 128 * 1024;

    private VerbsLeakCheck leaks;
    private SoftTwoNodes soft;
    private RdmaNode clientNode;
    private RdmaNode serverNode;
    /** The client's and the server's weights as {@link RailsChannelFactory#weights} read them after the transfer. */
    private double[] clientWeights;
    private IllegalArgumentException serverWeightsError;

    @BeforeEach
    void begin() {
        leaks = VerbsLeakCheck.begin();
    }

    @AfterEach
    void end() {
        if (clientNode != null) {
            clientNode.close();
        }
        if (serverNode != null) {
            serverNode.close();
        }
        if (soft != null) {
            soft.close();
        }
        leaks.assertClean();
    }

    private int pass() {
        return soft.progress() + clientNode.invoke() + serverNode.invoke();
    }

    private void runUntil(BooleanSupplier done) {
        for (int i = 0; i < 20_000_000; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (pass() == 0) {
                soft.clock().advance(1_000);
            }
        }
        throw new AssertionError("not reached by virtual time " + soft.clock().nanoTime());
    }

    /** Sends N numbered messages client to server; returns bytes sent per rail. */
    private long[] transfer(ChannelFactory factory) {
        soft = SoftTwoNodes.create(2, RailConfig.builder().bandwidthBytesPerSec(GB).latencyNs(2_000).build());
        RailConfig slow = RailConfig.builder().bandwidthBytesPerSec(GB / 4).latencyNs(2_000).build();
        ((SoftPort) soft.a().devices().get(0).port(2)).setRail(slow);
        ((SoftPort) soft.b().devices().get(0).port(2)).setRail(slow);
        clientNode = RdmaNode.builder().provider(soft.a()).name("client").ports(1, 2).threadingMode(ThreadingMode.INVOKER)
            .clock(soft.clock()).driveProvider(false).bufferBytes(64 * 1024).build();
        serverNode = RdmaNode.builder().provider(soft.b()).name("server").ports(1, 2).threadingMode(ThreadingMode.INVOKER)
            .clock(soft.clock()).driveProvider(false).bufferBytes(64 * 1024).build();
        RdmaServer listener = serverNode.bind(new PortAddress("mem", soft.b().devices().get(0).name(), 0));
        AtomicReference<RdmaConnection> accepted = new AtomicReference<>();
        AtomicReference<RdmaConnection> connected = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        listener.accept().subscribe(accepted::set);
        clientNode.connect(listener.address(), ConnectionSpec.rails(2).striping(factory)).subscribe(connected::set, error::set);
        runUntil(() -> (accepted.get() != null && connected.get() != null) || error.get() != null);
        assertEquals(null, error.get());
        RdmaConnection client = connected.get();
        RdmaConnection server = accepted.get();
        List<Integer> received = new ArrayList<>();
        server.receive().subscribe(m -> {
            received.add(m.content().getInt(0));
            assertEquals(SIZE, m.content().capacity() >= SIZE ? SIZE : m.content().capacity());
            m.release();
        });
        AtomicBoolean sent = new AtomicBoolean();
        client.send(Flux.range(0, N).map(i -> RdmaMessage.write(SIZE, (buf, off, len) -> buf.putInt(off, i))))
            .subscribe(null, error::set, () -> sent.set(true));
        runUntil(() -> (sent.get() && received.size() == N) || error.get() != null);
        assertEquals(null, error.get());
        for (int i = 0; i < N; i++) {
            assertEquals(i, received.get(i), "PSN order across rails");
        }
        if (factory instanceof RailsChannelFactory rails) {
            clientWeights = rails.weights(client);
            serverWeightsError = assertThrows(IllegalArgumentException.class, () -> rails.weights(server));
        }
        long[] bytes = new long[2];
        for (Subchannel sc : client.subchannels()) {
            bytes[sc.rail()] = sc.bytesSent();
        }
        client.close();
        server.close();
        for (int i = 0; i < 1000 && pass() > 0; i++) {
            soft.clock().advance(1_000);
        }
        return bytes;
    }

    @Test
    void adaptiveSelectedFromConnectionSpecPutsMoreBytesOnTheFasterRail() {
        long[] bytes = transfer(Rails.adaptive());
        double fastShare = (double) bytes[0] / (bytes[0] + bytes[1]);
        assertTrue(bytes[1] > 0, "the slow rail is still used");
        assertTrue(fastShare > 0.65, "fast rail carried " + fastShare + " of the bytes: " + bytes[0] + " / " + bytes[1]);
        System.out.println("connection adaptive: fast rail share " + fastShare);
    }

    @Test
    void aConnectionsCurrentWeightsAreReadFromItsFactory() {
        RailsChannelFactory adaptive = Rails.adaptive();
        transfer(adaptive);
        assertEquals(2, clientWeights.length);
        assertEquals(1.0, clientWeights[0] + clientWeights[1], 1e-9);
        // the policy measured 1 GB/s against 250 MB/s: the fast rail's share heads for 0.8
        assertTrue(clientWeights[0] > 0.7, "fast rail weight " + clientWeights[0]);
        // the accepting side was scheduled by its node's factory, not this one
        assertTrue(serverWeightsError.getMessage().contains("was not scheduled by RailsChannelFactory{adaptive}"),
            serverWeightsError.getMessage());
    }

    @Test
    void evenWeightsAreReadAsEqualShares() {
        transfer(RailsChannelFactory.even());
        assertEquals(0.5, clientWeights[0], 1e-12);
        assertEquals(0.5, clientWeights[1], 1e-12);
    }

    @Test
    void evenWeightsSplitLargeMessagesEvenly() {
        long[] bytes = transfer(RailsChannelFactory.even());
        double fastShare = (double) bytes[0] / (bytes[0] + bytes[1]);
        assertEquals(0.5, fastShare, 0.05);
    }

    @Test
    void windowRoundRobinFromConnectionSpecDeliversInOrder() {
        long[] bytes = transfer(Rails.channel(s -> s.multiplexing(MultiplexingPolicies.windowRoundRobin(4))
            .switchoverThresholdBytes(Long.MAX_VALUE)));
        // window RR skips a rail short of credits, so the fast rail carries more; both carry windows
        assertTrue(bytes[0] >= 4L * SIZE && bytes[1] >= 4L * SIZE, bytes[0] + " / " + bytes[1]);
    }
}
