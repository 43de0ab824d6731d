package io.rdmaflux.ud;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The events of the RC send/receive channel a {@link UdChannel} wraps, reported to the connection as the
 * {@link UdChannel}'s own (the connection knows the channel it opened, not the one inside it). Every event is
 * forwarded unchanged but for its channel argument.
 *
 * <p><b>Concurrency:</b> the progress thread of the channel, as every {@link ChannelEvents}.
 */
final class UdEventsRelay implements ChannelEvents {
    private final Channel outer;
    private volatile @Nullable ChannelEvents listener;

    UdEventsRelay(Channel outer) {
        this.outer = outer;
    }

    void listener(ChannelEvents l) {
        this.listener = l;
    }

    @Override
    public int takeMessageCreditTotal() {
        ChannelEvents l = listener;
        return l == null ? 0 : l.takeMessageCreditTotal();
    }

    @Override
    public void onMessageCreditTotal(int total15) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onMessageCreditTotal(total15);
        }
    }

    @Override
    public void onData(Channel channel, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn, boolean first, boolean last, int messageLength) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onData(outer, slot, buffer, payloadOffset, payloadLength, psn, first, last, messageLength);
        }
    }

    @Override
    public void onPackedData(Channel channel, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onPackedData(outer, slot, buffer, payloadOffset, firstPsn, count);
        }
    }

    @Override
    public void onRts(Channel channel, int psn, int messageLength) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onRts(outer, psn, messageLength);
        }
    }

    @Override
    public void onCts(Channel channel, int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onCts(outer, psn, messageLength, remoteAddress, rkey, flags);
        }
    }

    @Override
    public void onFin(Channel channel, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onFin(outer, psn, stripeOffset, stripeLength, stripes, stripeIndex);
        }
    }

    @Override
    public void onRtsRead(Channel channel, int psn, int messageLength, long address, int rkey) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onRtsRead(outer, psn, messageLength, address, rkey);
        }
    }

    @Override
    public void onReadFin(Channel channel, int psn, int messageLength, int flags) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onReadFin(outer, psn, messageLength, flags);
        }
    }

    @Override
    public void onReadCompleted(Channel channel, long token) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onReadCompleted(outer, token);
        }
    }

    @Override
    public void onSendCompleted(Channel channel, long token) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onSendCompleted(outer, token);
        }
    }

    @Override
    public void onPeerClose(Channel channel, boolean abort, boolean last, int nextPsn, String reason, int railMask) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onPeerClose(outer, abort, last, nextPsn, reason, railMask);
        }
    }

    @Override
    public void onPeerInboundClosed(Channel channel, int firstUndeliveredPsn) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onPeerInboundClosed(outer, firstUndeliveredPsn);
        }
    }

    @Override
    public void onPeerRailDown(Channel channel, int failedRail) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onPeerRailDown(outer, failedRail);
        }
    }

    @Override
    public void onChannelControl(Channel channel, DirectBuffer buffer, int offset, int length) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onChannelControl(outer, buffer, offset, length);
        }
    }

    @Override
    public void onWriteCompleted(Channel channel, int tag) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onWriteCompleted(outer, tag);
        }
    }

    @Override
    public void onFailure(Channel channel, RdmaException error) {
        ChannelEvents l = listener;
        if (l != null) {
            l.onFailure(outer, error);
        }
    }
}
