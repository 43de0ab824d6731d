package io.rdmaflux.striping.connection;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
import io.rdmaflux.core.channel.SubchannelScheduler;
import io.rdmaflux.striping.MultiplexingPolicies;
import io.rdmaflux.striping.Rails;
import io.rdmaflux.striping.StripingMetrics;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftPort;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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
    private static final AtomicInteger FABRICS = new AtomicInteger();

    private VerbsLeakCheck leaks;
    private SoftTwoNodes soft;
    private RdmaNode clientNode;
    private RdmaNode serverNode;
    /** The client's and the server's weights as {@link RailsChannelFactory#weights} read them after the transfer. */
    private double[] clientWeights;
    private IllegalArgumentException serverWeightsError;
    /** The client's metrics as {@link RailsChannelFactory#metrics} read them after the transfer, and the server's attempt. */
    private StripingMetrics clientMetrics;
    private IllegalArgumentException serverMetricsError;
    /** Virtual time when the client started sending, and when every message had arrived. */
    private long sendStartNs;
    private long sendEndNs;
    /** Every FIN frame the client's NIC put on the wire. */
    private FinTap tap;

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

    /**
     * A factory that splits as {@code rails} does and keeps each message's split (PSN to bytes per
     * rail), what the connection must put one FIN per non-empty stripe on.
     */
    private static final class SplitRecorder implements ChannelFactory {
        final RailsChannelFactory rails;
        final Map<Integer, long[]> splits = new HashMap<>();

        SplitRecorder(RailsChannelFactory rails) {
            this.rails = rails;
        }

        @Override
        public SubchannelScheduler create(List<? extends Subchannel> subchannels) {
            SubchannelScheduler s = rails.create(subchannels);
            return new SubchannelScheduler() {
                @Override
                public int select(int psn, int lengthBytes, Subchannel[] subs) {
                    return s.select(psn, lengthBytes, subs);
                }

                @Override
                public void onMessageCompleted(Subchannel subchannel, int psn, int lengthBytes, long elapsedNs) {
                    s.onMessageCompleted(subchannel, psn, lengthBytes, elapsedNs);
                }

                @Override
                public long stripeThresholdBytes() {
                    return s.stripeThresholdBytes();
                }

                @Override
                public void stripe(int psn, int lengthBytes, Subchannel[] subs, long nowNs, long[] stripeBytes) {
                    s.stripe(psn, lengthBytes, subs, nowNs, stripeBytes);
                    splits.put(psn, stripeBytes.clone());
                }

                @Override
                public void onStripeCompleted(Subchannel subchannel, int psn, long offsetBytes, long lengthBytes, long postedNs,
                                              long completedNs) {
                    s.onStripeCompleted(subchannel, psn, offsetBytes, lengthBytes, postedNs, completedNs);
                }

                @Override
                public void onSubchannelFailed(Subchannel subchannel) {
                    s.onSubchannelFailed(subchannel);
                }
            };
        }
    }

    /** Sends N numbered messages client to server; returns bytes sent per rail. */
    private long[] transfer(ChannelFactory factory) {
        tap = new FinTap("striped-connection-" + FABRICS.getAndIncrement());
        soft = SoftTwoNodes.create(2, RailConfig.builder().bandwidthBytesPerSec(GB).latencyNs(2_000).build(),
            b -> b.fabric(tap.softFabric()));
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
        sendStartNs = soft.clock().nanoTime();
        client.send(Flux.range(0, N).map(i -> RdmaMessage.write(SIZE, (buf, off, len) -> buf.putInt(off, i))))
            .subscribe(null, error::set, () -> sent.set(true));
        runUntil(() -> (sent.get() && received.size() == N) || error.get() != null);
        sendEndNs = soft.clock().nanoTime();
        assertEquals(null, error.get());
        for (int i = 0; i < N; i++) {
            assertEquals(i, received.get(i), "PSN order across rails");
        }
        RailsChannelFactory rails = factory instanceof RailsChannelFactory r ? r
            : factory instanceof SplitRecorder recorder ? recorder.rails : null;
        if (rails != null) {
            clientWeights = rails.weights(client);
            serverWeightsError = assertThrows(IllegalArgumentException.class, () -> rails.weights(server));
            clientMetrics = rails.metrics(client);
            serverMetricsError = assertThrows(IllegalArgumentException.class, () -> rails.metrics(server));
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

    /**
     * Seed 000 §5.3: a striped message ends with one FIN on each subchannel that carried a stripe of
     * it, and on no other. Counted on the wire (every RC SEND the client's NIC transmits), against
     * the split the scheduler made for that PSN.
     */
    @Test
    void aStripedMessageSendsOneFinOnEverySubchannelItUsedAndNoneElsewhere() {
        SplitRecorder recorder = new SplitRecorder(Rails.adaptive());
        transfer(recorder);
        assertEquals(N, recorder.splits.size(), "every message was striped by the scheduler");
        Map<Integer, int[]> finsPerRail = new HashMap<>();
        for (FinTap.Fin f : tap.fins()) {
            int rail = f.port() - 1;
            long[] split = recorder.splits.get(f.psn());
            assertTrue(split != null, "FIN for PSN " + f.psn() + " which was not striped");
            assertEquals(f.index(), rail, "the FIN of stripe " + f.index() + " travels on that stripe's subchannel: " + f);
            assertEquals(split[rail], f.stripeLength(), "FIN stripe length: " + f);
            finsPerRail.computeIfAbsent(f.psn(), p -> new int[2])[rail]++;
        }
        int onBoth = 0;
        for (int psn = 0; psn < N; psn++) {
            long[] split = recorder.splits.get(psn);
            int[] fins = finsPerRail.getOrDefault(psn, new int[2]);
            int used = 0;
            for (int rail = 0; rail < 2; rail++) {
                assertEquals(split[rail] > 0 ? 1 : 0, fins[rail], "FINs of PSN " + psn + " on rail " + rail + ", split "
                    + java.util.Arrays.toString(split));
                used += split[rail] > 0 ? 1 : 0;
            }
            onBoth += used == 2 ? 1 : 0;
        }
        for (FinTap.Fin f : tap.fins()) {
            long[] split = recorder.splits.get(f.psn());
            assertEquals((split[0] > 0 ? 1 : 0) + (split[1] > 0 ? 1 : 0), f.stripes(), "stripes announced in " + f);
        }
        // both rails carry most messages, so the test sees FINs on two subchannels per message
        assertTrue(onBoth > N / 2, onBoth + " of " + N + " messages striped over both rails");
    }

    /**
     * {@link RailsChannelFactory#metrics}: per-rail bytes as the subchannels sent them, stripes as
     * the FINs on the wire, each message once per rail it used, and a weight history in the node's
     * time of the transfer (not from 0).
     */
    @Test
    void aConnectionsMetricsAreReadFromItsFactory() {
        RailsChannelFactory adaptive = Rails.adaptive();
        long[] bytes = transfer(adaptive);
        StripingMetrics m = clientMetrics;
        assertTrue(serverMetricsError.getMessage().contains("read the metrics from the factory"), serverMetricsError.getMessage());
        assertEquals(N, m.messagesCompleted());
        assertEquals(N * (long) SIZE, m.totalBytes());
        assertArrayEquals(bytes, m.railBytes(), "payload bytes per rail, as the subchannels count them");
        long[] stripes = new long[2];
        long[] messages = new long[2];
        java.util.Set<List<Integer>> messageOnRail = new java.util.HashSet<>();
        for (FinTap.Fin f : tap.fins()) {
            stripes[f.port() - 1]++;
            if (messageOnRail.add(List.of(f.psn(), f.port()))) {
                messages[f.port() - 1]++;
            }
        }
        assertArrayEquals(stripes, m.railStripesCompleted(), "one stripe per FIN");
        assertArrayEquals(stripes, m.railStripesPosted());
        assertArrayEquals(messages, m.railMessages(), "each message once per rail it used");
        assertArrayEquals(clientWeights, m.weights());
        List<StripingMetrics.WeightSample> h = m.weightHistory();
        assertEquals(N + 1, h.size(), "the initial weights, then one sample per striped message");
        assertArrayEquals(new double[] {0.8, 0.2}, h.get(0).shares(), 1e-9, "adaptive starts from the ports' advertised 4:1 rates");
        assertArrayEquals(m.weights(), h.get(N).shares());
        long previous = sendStartNs;
        for (StripingMetrics.WeightSample w : h) {
            assertTrue(w.timeNs() >= previous && w.timeNs() <= sendEndNs, "sample at " + w.timeNs() + " ns, sending ran from "
                + sendStartNs + " to " + sendEndNs);
            previous = w.timeNs();
        }
        System.out.println("connection adaptive metrics: " + m);
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
