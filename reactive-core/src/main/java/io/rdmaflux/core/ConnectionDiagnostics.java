package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.internal.rc.RcSubchannel;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;

/**
 * What a connection tells about itself: the {@link ConnectionMetrics} snapshot of
 * {@link RdmaConnection#metrics()}, the rails' {@link RdmaConnection#subchannels()}, the count of received messages not released that node metrics and
 * leak checks add up, and the protocol state and counters that diagnostics and the tests read (through
 * {@code ConnectionProbe}). It reads the stages' counters and changes nothing.
 *
 * <p><b>Concurrency:</b> {@link #metrics()}, {@link #subchannels()} and {@link #buffersOutstanding()} on any thread (values may lag
 * the progress thread); the rest reads progress-thread state without synchronization: call it on the
 * progress thread, or in INVOKER mode between duty cycles.
 */
final class ConnectionDiagnostics {
    private final DefaultRdmaConnection connection;

    /** Reads {@code connection}'s stages through its accessors: nothing here is on a per-message path. */
    ConnectionDiagnostics(DefaultRdmaConnection connection) {
        this.connection = connection;
    }

    /** {@link RdmaConnection#metrics()}: a new snapshot, frame counts summed over the rails. */
    ConnectionMetrics metrics() {
        EnumMap<FrameType, Long> sent = new EnumMap<>(FrameType.class);
        EnumMap<FrameType, Long> received = new EnumMap<>(FrameType.class);
        for (FrameType t : FrameType.values()) {
            long s = 0;
            long r = 0;
            for (Channel ch : connection.channels()) {
                s += ch.framesSent(t);
                r += ch.framesReceived(t);
            }
            sent.put(t, s);
            received.put(t, r);
        }
        long bytesSent = 0;
        for (Channel ch : connection.channels()) {
            bytesSent += ch.bytesSent();
        }
        SendPipeline pipeline = connection.sendPipeline();
        SendOps ops = connection.sendOps();
        InboundDelivery delivery = connection.delivery();
        return new ConnectionMetrics(pipeline.messagesSent(), ops.messagesDelivered(), delivery.messagesReceived(),
            connection.receiveBuffers().held(), connection.sendCredits().credits(), connection.sendCredits().maxOutstandingSeen(),
            delivery.outOfOrder(), sent, received, bytesSent, delivery.bytesReceived(), pipeline.creditStalls(),
            connection.ledger().messagesResent(), ops.deliveryTotalNs());
    }

    /** {@link RdmaConnection#subchannels()}: immutable snapshots, one per rail in rail order (values may lag the progress thread). */
    List<SubchannelSnapshot> subchannels() {
        List<SubchannelSnapshot> rails = new ArrayList<>(connection.channels().length);
        for (Channel ch : connection.channels()) {
            rails.add(SubchannelSnapshot.of(ch));
        }
        return List.copyOf(rails);
    }

    /** Receive buffers held plus reassembled and rendezvous messages not released: what a leak check expects to be 0. */
    int buffersOutstanding() {
        return connection.receiveBuffers().held() + connection.assembler().outstanding() + connection.rendezvousReceiver().outstanding();
    }

    /** The live channel of {@code rail}. */
    RcSubchannel subchannel(int rail) {
        return (RcSubchannel) connection.channels()[rail];
    }

    /** Packed DATA frames sent over every rail. */
    long packedFramesSent() {
        long n = 0;
        for (Channel ch : connection.channels()) {
            n += ch.packedFramesSent();
        }
        return n;
    }

    /** Messages of packed frames taken back from the send buffers of failed rails to be sent again. */
    long packedMessagesTakenBack() {
        return connection.ledger().packedMessagesTakenBack();
    }

    /** Message credits the peer granted and this side has not used. */
    long sendCreditsHeld() {
        return connection.sendCredits().credits();
    }

    /** Rails that failed while the connection went on over the others. */
    int railFailures() {
        return connection.failover().railFailures();
    }

    /** Zero-credit probes sent so far. */
    long creditProbes() {
        return connection.creditProbe().probes();
    }

    /** Pooled views created so far: the most packed messages held at once. */
    int viewsCreated() {
        return connection.receiveBuffers().viewsCreated();
    }

    /** Protocol state for diagnostics. */
    String describe() {
        DefaultRdmaConnection c = connection;
        StringBuilder sb = new StringBuilder(c.name()).append(": state=").append(c.state()).append(", ")
            .append(c.sendPipeline().describe()).append(", ").append(c.delivery().describe()).append(", ").append(c.messageCredits())
            .append(", ").append(c.sendCredits()).append(", rendezvous sends=").append(c.rendezvousSender().inUse()).append(", ")
            .append(c.rendezvousReceiver().describe()).append(", failure=").append(c.failure()).append(", ").append(c.sendOps().describe())
            .append(", ").append(c.closeHandshake().describe());
        for (Channel ch : connection.channels()) {
            sb.append("\n  ").append(ch).append(" framesInFlight=").append(ch.framesInFlight()).append(" writes=").append(ch.writesInFlight());
        }
        return sb.toString();
    }
}
