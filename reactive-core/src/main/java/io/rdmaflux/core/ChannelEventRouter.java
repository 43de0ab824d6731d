package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.internal.credit.MessageCredits;
import io.rdmaflux.core.internal.credit.SendCredits;
import io.rdmaflux.core.internal.onesided.OneSidedEngine;
import org.agrona.DirectBuffer;

/**
 * The listener of a connection's channels: routes each typed event of every rail to the stage that owns
 * its concept (DATA to the {@link InboundAssembler}, RTS and FIN to the {@link RendezvousReceiver}, CTS
 * to the {@link RendezvousSender}, completions to the {@link SendPipeline} or the one-sided engine, CLOSE
 * to the {@link CloseHandshake}, rail failures to {@link Failover}, credit totals to the credit
 * accounts). It holds no state of its own; completion times are the connection's duty-cycle clock
 * reading ({@link DefaultRdmaConnection#cycleNs()}).
 *
 * <p><b>Concurrency:</b> progress thread only: the channels raise their events from their
 * {@link Channel#doWork} inside the connection's duty cycle (see {@link ChannelEvents}).
 */
final class ChannelEventRouter implements ChannelEvents {
    private final DefaultRdmaConnection connection;
    private final MessageCredits messageCredits;
    private final SendCredits sendCredits;
    private final CreditProbe probe;
    private final InboundAssembler assembler;
    private final RendezvousReceiver rvReceiver;
    private final RendezvousSender rvSender;
    private final SendPipeline pipeline;
    private final SendOps ops;
    private final CloseHandshake close;
    private final Failover failover;
    private final LazyOneSidedEngine oneSided;

    ChannelEventRouter(DefaultRdmaConnection connection, MessageCredits messageCredits, SendCredits sendCredits,
                       CreditProbe probe, InboundAssembler assembler, RendezvousReceiver rvReceiver,
                       RendezvousSender rvSender, SendPipeline pipeline, SendOps ops,
                       CloseHandshake close, Failover failover, LazyOneSidedEngine oneSided) {
        this.connection = connection;
        this.messageCredits = messageCredits;
        this.sendCredits = sendCredits;
        this.probe = probe;
        this.assembler = assembler;
        this.rvReceiver = rvReceiver;
        this.rvSender = rvSender;
        this.pipeline = pipeline;
        this.ops = ops;
        this.close = close;
        this.failover = failover;
        this.oneSided = oneSided;
    }

    @Override
    public int takeMessageCreditTotal() {
        return messageCredits.takeWireTotal();
    }

    @Override
    public long receiveDemand() {
        return messageCredits.demand();
    }

    @Override
    public void onMessageCreditTotal(int total15) {
        sendCredits.onGrantTotal(total15);
        probe.heard(connection.cycleNs());
    }

    @Override
    public void onData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn,
                       boolean first, boolean last, int messageLength) {
        assembler.onData(ch, slot, buffer, payloadOffset, payloadLength, psn, first, last, messageLength);
    }

    @Override
    public void onPackedData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        assembler.onPackedData(ch, slot, buffer, payloadOffset, firstPsn, count);
    }

    @Override
    public void onRts(Channel ch, int psn, int messageLength) {
        rvReceiver.onRts(ch, psn, messageLength);
    }

    @Override
    public void onCts(Channel ch, int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        rvSender.onCts(ch, psn, messageLength, remoteAddress, rkey, flags);
    }

    @Override
    public void onCts(Channel ch, int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        rvSender.onCts(ch, psn, messageLength, remoteAddress, railRkeys, flags);
    }

    @Override
    public void onFin(Channel ch, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        rvReceiver.onFin(ch, psn, stripeOffset, stripeLength, stripes, stripeIndex);
    }

    @Override
    public void onRtsRead(Channel ch, int psn, int messageLength, long address, int rkey) {
        rvReceiver.onRtsRead(ch, psn, messageLength, address, rkey);
    }

    @Override
    public void onReadFin(Channel ch, int psn, int messageLength, int flags) {
        rvSender.onReadFin(ch, psn, messageLength, flags);
    }

    @Override
    public void onReadCompleted(Channel ch, long token) {
        if (WorkRequestTokens.isOneSided(token)) {
            OneSidedEngine os = oneSided.current();
            if (os != null) {
                os.onReadCompleted(ch, token);
            }
        } else {
            rvReceiver.onReadCompleted(token, connection.cycleNs());
        }
    }

    @Override
    public void onWriteCompleted(Channel ch, int tag) {
        OneSidedEngine os = oneSided.current();
        if (os != null) {
            // without an engine no one-sided write was posted
            os.onWriteCompleted(ch, tag);
        }
    }

    @Override
    public void onOneSidedControl(Channel ch, FrameType type, DirectBuffer buffer, int frameOffset) {
        oneSided.engine().onControl(ch, type, buffer, frameOffset);
    }

    @Override
    public void onSendCompleted(Channel ch, long token) {
        pipeline.onSendCompleted(ch, token, connection.cycleNs());
    }

    @Override
    public void onPeerClose(Channel ch, boolean abort, boolean last, int nextPsn, String reason, int railMask) {
        close.onPeerClose(ch, abort, last, nextPsn, reason, railMask);
    }

    @Override
    public void onPeerInboundClosed(Channel ch, int firstUndeliveredPsn) {
        if (!connection.isTerminated()) {
            ops.onPeerInboundClosed(firstUndeliveredPsn);
        }
    }

    @Override
    public void onPeerRailDown(Channel ch, int failedRail) {
        failover.onPeerRailDown(failedRail);
    }

    @Override
    public void onFailure(Channel ch, RdmaException error) {
        failover.onFailure(ch, error);
    }
}
