package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.internal.credit.MessageCredits;
import io.rdmaflux.core.internal.credit.SendCredits;
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
    private final Channel[] channels;
    private final MessageCredits messageCredits;
    private final SendCredits sendCredits;
    private final ReceiveBuffers buffers;
    private final InboundDelivery delivery;
    private final InboundAssembler assembler;
    private final RendezvousReceiver rvReceiver;
    private final InflightLedger ledger;
    private final SendOps ops;
    private final RendezvousSender rvSender;
    private final SendPipeline pipeline;
    private final CloseHandshake close;
    private final Failover failover;
    private final CreditProbe probe;

    ConnectionDiagnostics(DefaultRdmaConnection connection, Channel[] channels, MessageCredits messageCredits,
                          SendCredits sendCredits, ReceiveBuffers buffers, InboundDelivery delivery,
                          InboundAssembler assembler, RendezvousReceiver rvReceiver, InflightLedger ledger, SendOps ops,
                          RendezvousSender rvSender, SendPipeline pipeline, CloseHandshake close, Failover failover,
                          CreditProbe probe) {
        this.connection = connection;
        this.channels = channels;
        this.messageCredits = messageCredits;
        this.sendCredits = sendCredits;
        this.buffers = buffers;
        this.delivery = delivery;
        this.assembler = assembler;
        this.rvReceiver = rvReceiver;
        this.ledger = ledger;
        this.ops = ops;
        this.rvSender = rvSender;
        this.pipeline = pipeline;
        this.close = close;
        this.failover = failover;
        this.probe = probe;
    }

    /** {@link RdmaConnection#metrics()}: a new snapshot, frame counts summed over the rails. */
    ConnectionMetrics metrics() {
        EnumMap<FrameType, Long> sent = new EnumMap<>(FrameType.class);
        EnumMap<FrameType, Long> received = new EnumMap<>(FrameType.class);
        for (FrameType t : FrameType.values()) {
            long s = 0;
            long r = 0;
            for (Channel ch : channels) {
                s += ch.framesSent(t);
                r += ch.framesReceived(t);
            }
            sent.put(t, s);
            received.put(t, r);
        }
        long bytesSent = 0;
        for (Channel ch : channels) {
            bytesSent += ch.bytesSent();
        }
        return new ConnectionMetrics(pipeline.messagesSent(), ops.messagesDelivered(), delivery.messagesReceived(), buffers.held(),
            sendCredits.credits(), sendCredits.maxOutstandingSeen(), delivery.outOfOrder(), sent, received,
            bytesSent, delivery.bytesReceived(), pipeline.creditStalls(), ledger.messagesResent(), ops.deliveryTotalNs());
    }

    /** {@link RdmaConnection#subchannels()}: immutable snapshots, one per rail in rail order (values may lag the progress thread). */
    List<SubchannelSnapshot> subchannels() {
        List<SubchannelSnapshot> rails = new ArrayList<>(channels.length);
        for (Channel ch : channels) {
            rails.add(SubchannelSnapshot.of(ch));
        }
        return List.copyOf(rails);
    }

    /** Receive buffers held plus reassembled and rendezvous messages not released: what a leak check expects to be 0. */
    int buffersOutstanding() {
        return buffers.held() + assembler.outstanding() + rvReceiver.outstanding();
    }

    /** The live channel of {@code rail}. */
    RcSubchannel subchannel(int rail) {
        return (RcSubchannel) channels[rail];
    }

    /** Packed DATA frames sent over every rail. */
    long packedFramesSent() {
        long n = 0;
        for (Channel ch : channels) {
            n += ch.packedFramesSent();
        }
        return n;
    }

    /** Messages of packed frames taken back from the send buffers of failed rails to be sent again. */
    long packedMessagesTakenBack() {
        return ledger.packedMessagesTakenBack();
    }

    /** Message credits the peer granted and this side has not used. */
    long sendCreditsHeld() {
        return sendCredits.credits();
    }

    /** Rails that failed while the connection went on over the others. */
    int railFailures() {
        return failover.railFailures();
    }

    /** Zero-credit probes sent so far. */
    long creditProbes() {
        return probe.probes();
    }

    /** Pooled views created so far: the most packed messages held at once. */
    int viewsCreated() {
        return buffers.viewsCreated();
    }

    /** Protocol state for diagnostics. */
    String describe() {
        StringBuilder sb = new StringBuilder(connection.name()).append(": state=").append(connection.state()).append(", ")
            .append(pipeline.describe()).append(", ").append(delivery.describe()).append(", ").append(messageCredits)
            .append(", ").append(sendCredits).append(", rendezvous sends=").append(rvSender.inUse()).append(", ")
            .append(rvReceiver.describe()).append(", failure=").append(connection.failure()).append(", ").append(ops.describe())
            .append(", ").append(close.describe());
        for (Channel ch : channels) {
            sb.append("\n  ").append(ch).append(" framesInFlight=").append(ch.framesInFlight()).append(" writes=").append(ch.writesInFlight());
        }
        return sb.toString();
    }
}
