package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftPort;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Sinks;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PSN/ESN inside one connection (seed 000 &sect;5.2): messages spread round robin over rails of
 * different latency really overtake each other, wait in the reorder queue, and reach the subscriber
 * in PSN order, each exactly once.
 */
class ReorderAcrossRailsTest {
    private static final int N = 300;
    /** One message per DATA frame (a 256-byte buffer carries 232 payload bytes), so consecutive PSNs take different rails. */
    private static final int MESSAGE_BYTES = 150;

    @ParameterizedTest(name = "{0} rails")
    @ValueSource(ints = {2, 3})
    void messagesOvertakingEachOtherOnRailsOfDifferentLatencyAreDeliveredInPsnOrderOnce(int rails) {
        try (InvokerPair p = InvokerPair.open(rails, ConnectionSpec.rails(rails).striping(ChannelFactory.roundRobin()),
            b -> b.bufferBytes(256).receiveBuffers(8))) {
            // rail r is r x 5 us slower than rail 0, both ways
            for (int r = 1; r < rails; r++) {
                RailConfig slow = RailConfig.builder().latencyNs(r * 5_000L).build();
                ((SoftPort) p.soft.a().devices().get(0).port(r + 1)).setRail(slow);
                ((SoftPort) p.soft.b().devices().get(0).port(r + 1)).setRail(slow);
            }
            List<Integer> psns = new ArrayList<>();
            List<Integer> values = new ArrayList<>();
            p.server.receive().subscribe(m -> {
                psns.add(m.psn());
                values.add(m.content().getInt(0));
                m.release();
            });
            Sinks.Many<RdmaMessage> out = Sinks.many().unicast().onBackpressureBuffer();
            SendOutcome sent = SendOutcome.of(p.client.send(out.asFlux()));
            // one message per microsecond: every rail keeps credit, so round robin alternates and a message on a
            // slow rail is overtaken by the next ones on the faster rails
            for (int i = 0; i < N; i++) {
                int value = i;
                out.tryEmitNext(RdmaMessage.write(MESSAGE_BYTES, (buf, off, len) -> buf.putInt(off, value)));
                p.pass();
                p.soft.clock().advance(1_000);
            }
            out.tryEmitComplete();
            p.runUntil(() -> sent.completed() && psns.size() >= N);
            p.drive();

            assertEquals(N, psns.size(), "each message exactly once");
            for (int i = 0; i < N; i++) {
                assertEquals(i, psns.get(i), "PSN order");
                assertEquals(i, values.get(i), "payload of PSN " + i);
            }
            for (var sc : p.client.subchannels()) {
                assertTrue(ConnectionProbe.channel(p.client, sc.rail()).framesSent(FrameType.DATA) > N / (2 * rails), "rail " + sc.rail() + " carried its share");
            }
            long outOfOrder = p.server.metrics().outOfOrder();
            assertTrue(outOfOrder >= N / 4, outOfOrder + " of " + N + " messages arrived ahead of their ESN and waited");
            assertEquals(0, p.serverNode.metrics().buffersOutstanding());
        }
    }
}
