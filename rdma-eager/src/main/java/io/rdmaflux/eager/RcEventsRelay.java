package io.rdmaflux.eager;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import org.agrona.DirectBuffer;

/**
 * The events of the RC send/receive channel an {@link EagerChannel} decorates, reported to the
 * connection as the eager channel's own: every data-path event is forwarded (a frame that came over
 * send/receive also tells the polling set the peer is busy, seed 001 &sect;4.6), while the eager
 * protocol's own control frames, ring WRITE completions and the RC channel's failure go to the
 * {@link EagerChannel}.
 *
 * <p><b>Concurrency:</b> the progress thread of the channel, as every {@link ChannelEvents}.
 */
final class RcEventsRelay implements ChannelEvents {
    private final EagerChannel channel;

    RcEventsRelay(EagerChannel channel) {
        this.channel = channel;
    }

    @Override
    public int takeMessageCreditTotal() {
        ChannelEvents l = channel.listener();
        return l == null ? 0 : l.takeMessageCreditTotal();
    }

    @Override
    public void onMessageCreditTotal(int total15) {
        ChannelEvents l = channel.listener();
        if (l != null) {
            l.onMessageCreditTotal(total15);
        }
    }

    @Override
    public void onData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn, boolean first,
                       boolean last, int messageLength) {
        channel.onFallbackFrame(first);
        channel.out().onData(channel, slot, buffer, payloadOffset, payloadLength, psn, first, last, messageLength);
    }

    @Override
    public void onPackedData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        channel.onFallbackFrame(true);
        channel.out().onPackedData(channel, slot, buffer, payloadOffset, firstPsn, count);
    }

    @Override
    public void onRts(Channel ch, int psn, int messageLength) {
        channel.onFallbackFrame(true);
        channel.out().onRts(channel, psn, messageLength);
    }

    @Override
    public void onRtsRead(Channel ch, int psn, int messageLength, long address, int rkey) {
        channel.onFallbackFrame(true);
        channel.out().onRtsRead(channel, psn, messageLength, address, rkey);
    }

    @Override
    public void onReadFin(Channel ch, int psn, int messageLength, int flags) {
        channel.out().onReadFin(channel, psn, messageLength, flags);
    }

    @Override
    public void onReadCompleted(Channel ch, long token) {
        channel.out().onReadCompleted(channel, token);
    }

    @Override
    public void onCts(Channel ch, int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        channel.out().onCts(channel, psn, messageLength, remoteAddress, rkey, flags);
    }

    @Override
    public void onCts(Channel ch, int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        channel.out().onCts(channel, psn, messageLength, remoteAddress, railRkeys, flags);
    }

    @Override
    public void onFin(Channel ch, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        channel.out().onFin(channel, psn, stripeOffset, stripeLength, stripes, stripeIndex);
    }

    @Override
    public void onSendCompleted(Channel ch, long token) {
        channel.out().onSendCompleted(channel, token);
    }

    @Override
    public void onPeerClose(Channel ch, boolean abort, boolean last, int nextPsn, String reason, int railMask) {
        channel.out().onPeerClose(channel, abort, last, nextPsn, reason, railMask);
    }

    @Override
    public void onPeerInboundClosed(Channel ch, int firstUndeliveredPsn) {
        channel.out().onPeerInboundClosed(channel, firstUndeliveredPsn);
    }

    @Override
    public void onPeerRailDown(Channel ch, int failedRail) {
        channel.out().onPeerRailDown(channel, failedRail);
    }

    @Override
    public void onChannelControl(Channel ch, DirectBuffer buffer, int offset, int length) {
        channel.onRcChannelControl(buffer, offset, length);
    }

    @Override
    public void onWriteCompleted(Channel ch, int tag) {
        channel.onRingWriteCompleted(tag);
    }

    @Override
    public void onFailure(Channel ch, RdmaException error) {
        channel.onRcFailure(error);
    }
}
