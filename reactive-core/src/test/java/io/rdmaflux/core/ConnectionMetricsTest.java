package io.rdmaflux.core;

import io.rdmaflux.core.frame.FrameType;
import org.junit.jupiter.api.Test;

import java.util.EnumMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The public {@link ConnectionMetrics} record: its frame counts, and the constructor from before they existed. */
class ConnectionMetricsTest {
    @Test
    void theSevenCounterConstructorKeepsItsCountersAndCountsNoFrames() {
        ConnectionMetrics m = new ConnectionMetrics(1, 2, 3, 4, 5, 6, 7);
        assertEquals(new ConnectionMetrics(1, 2, 3, 4, 5, 6, 7, Map.of(), Map.of()), m);
        assertEquals(1, m.messagesSent());
        assertEquals(7, m.outOfOrder());
        for (FrameType t : FrameType.values()) {
            assertEquals(0, m.framesSent(t), t.name());
            assertEquals(0, m.framesReceived(t), t.name());
        }
    }

    @Test
    void theNineComponentConstructorCountsNoBytesStallsResendsOrDeliveryTime() {
        ConnectionMetrics m = new ConnectionMetrics(1, 2, 3, 4, 5, 6, 7, Map.of(), Map.of());
        assertEquals(new ConnectionMetrics(1, 2, 3, 4, 5, 6, 7, Map.of(), Map.of(), 0, 0, 0, 0, 0), m);
        assertEquals(0, m.bytesSent());
        assertEquals(0, m.bytesReceived());
        assertEquals(0, m.creditStalls());
        assertEquals(0, m.messagesResent());
        assertEquals(0, m.deliveryTotalNs());
    }

    @Test
    void frameCountsAreCopiedCompleteAndUnmodifiable() {
        EnumMap<FrameType, Long> sent = new EnumMap<>(FrameType.class);
        sent.put(FrameType.CREDIT, 9L);
        ConnectionMetrics m = new ConnectionMetrics(0, 0, 0, 0, 0, 0, 0, sent, Map.of());
        sent.put(FrameType.CREDIT, 10L);
        assertEquals(9, m.framesSent(FrameType.CREDIT), "a copy, not a view");
        assertEquals(FrameType.values().length, m.framesSent().size());
        assertEquals(0, m.framesSent(FrameType.DATA));
        assertThrows(UnsupportedOperationException.class, () -> m.framesSent().put(FrameType.DATA, 1L));
    }
}
