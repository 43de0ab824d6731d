package io.rdmaflux.core;

import io.rdmaflux.core.frame.FrameType;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * A snapshot of one connection's counters. Read from any thread; values may be slightly stale.
 *
 * @param messagesSent          messages whose last fragment was posted
 * @param messagesDelivered     messages sent and completed (delivered to the peer); a rendezvous message
 *                              the peer discarded unwritten (its inbound side had closed) is not counted
 * @param messagesReceived      messages handed to the receive subscriber
 * @param receiveBuffersHeld    receive buffers holding messages not yet released
 * @param sendCredits           credits held for sending now, over all rails
 * @param maxOutstandingRequest most messages ever requested from a send publisher and not yet transmitted
 * @param outOfOrder            messages that waited in the reorder queue
 * @param framesSent            frames posted over all rails, by type (every type present, 0 if none):
 *                              e.g. how many explicit CREDIT frames the receive side needed
 * @param framesReceived        frames arrived over all rails, by type (every type present)
 * @param bytesSent             payload bytes sent over all rails, bytes: the sum of the rails'
 *                              {@code SubchannelSnapshot.bytesSent} (DATA payloads and rendezvous WRITEs)
 * @param bytesReceived         bytes of the messages handed to the receive subscriber, bytes
 * @param creditStalls          episodes in which the send side had a message to send and no credit for
 *                              it: no message credit (the peer's subscriber had no demand or held its
 *                              buffers), or no usable rail holding a buffer credit. Consecutive attempts
 *                              in one episode count once; a slow consumer stalls by design (backpressure),
 *                              a fast one that stalls means credits come back late
 * @param messagesResent        messages listed to be sent again over another rail after their rail failed
 *                              (rendezvous messages not counted)
 * @param deliveryTotalNs       the sum over the {@code messagesDelivered} messages of each one's delivery
 *                              time, ns: from the post of its first frame (or RTS) to the completion of its
 *                              last (the same time the scheduler's adaptive policies are fed, seed 000
 *                              &sect;4.5), on the node's clock; {@code deliveryTotalNs / messagesDelivered}
 *                              is the mean delivery latency
 */
public record ConnectionMetrics(long messagesSent, long messagesDelivered, long messagesReceived, int receiveBuffersHeld,
                                long sendCredits, long maxOutstandingRequest, long outOfOrder,
                                Map<FrameType, Long> framesSent, Map<FrameType, Long> framesReceived,
                                long bytesSent, long bytesReceived, long creditStalls, long messagesResent,
                                long deliveryTotalNs) {
    /** Copies both maps, unmodifiable, with a count for every frame type. */
    public ConnectionMetrics {
        framesSent = complete(framesSent);
        framesReceived = complete(framesReceived);
    }

    /**
     * The snapshot as it was before bytes, credit stalls, re-sends and delivery times were counted: those
     * 0. Kept so that code built against the nine-component record still compiles.
     */
    public ConnectionMetrics(long messagesSent, long messagesDelivered, long messagesReceived, int receiveBuffersHeld,
                             long sendCredits, long maxOutstandingRequest, long outOfOrder,
                             Map<FrameType, Long> framesSent, Map<FrameType, Long> framesReceived) {
        this(messagesSent, messagesDelivered, messagesReceived, receiveBuffersHeld, sendCredits, maxOutstandingRequest, outOfOrder,
            framesSent, framesReceived, 0, 0, 0, 0, 0);
    }

    /**
     * The snapshot as it was before frames were counted by type: every frame count 0. Kept so that code
     * built against the seven-counter record (tests, tools making snapshots of their own) still compiles.
     */
    public ConnectionMetrics(long messagesSent, long messagesDelivered, long messagesReceived, int receiveBuffersHeld,
                             long sendCredits, long maxOutstandingRequest, long outOfOrder) {
        this(messagesSent, messagesDelivered, messagesReceived, receiveBuffersHeld, sendCredits, maxOutstandingRequest, outOfOrder,
            Map.of(), Map.of());
    }

    /** Frames of {@code type} posted over all rails. */
    public long framesSent(FrameType type) {
        return framesSent.get(type);
    }

    /** Frames of {@code type} arrived over all rails. */
    public long framesReceived(FrameType type) {
        return framesReceived.get(type);
    }

    private static Map<FrameType, Long> complete(Map<FrameType, Long> counts) {
        EnumMap<FrameType, Long> m = new EnumMap<>(FrameType.class);
        for (FrameType t : FrameType.values()) {
            m.put(t, counts.getOrDefault(t, 0L));
        }
        return Collections.unmodifiableMap(m);
    }
}
