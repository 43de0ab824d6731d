package io.rdmaflux.core.channel;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.frame.FrameType;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The events of a decorated channel, reported to the connection's listener as events of the decorator
 * ({@link #outer}): the counterpart of {@link ForwardingChannel}. Every event is relayed, including the
 * ones with defaults ({@link #onWriteCompleted}, {@link #onOneSidedControl}, {@link #receiveDemand}), so
 * a decorator keeps one-sided work, SRQ demand and anything the SPI gains later working; it overrides
 * only what its kind intercepts (its own control frames, its own WRITE completions, the failure). Before
 * the listener is set, events are dropped and the credit and demand queries answer 0 and unbounded.
 *
 * <p><b>Concurrency:</b> the progress thread of the channel, as every {@link ChannelEvents}.
 */
public abstract class RelayingChannelEvents implements ChannelEvents {
    /** The decorator the connection knows: every relayed event names it. */
    protected final Channel outer;

    protected RelayingChannelEvents(Channel outer) {
        this.outer = java.util.Objects.requireNonNull(outer, "outer");
    }

    /** The connection's listener, or null before it was set. */
    protected abstract @Nullable ChannelEvents listener();

    @Override
    public int takeMessageCreditTotal() {
        ChannelEvents l = listener();
        return l == null ? 0 : l.takeMessageCreditTotal();
    }

    @Override
    public void onMessageCreditTotal(int total15) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onMessageCreditTotal(total15);
        }
    }

    @Override
    public void onData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn, boolean first,
                       boolean last, int messageLength) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onData(outer, slot, buffer, payloadOffset, payloadLength, psn, first, last, messageLength);
        }
    }

    @Override
    public void onPackedData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onPackedData(outer, slot, buffer, payloadOffset, firstPsn, count);
        }
    }

    @Override
    public void onRts(Channel ch, int psn, int messageLength) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onRts(outer, psn, messageLength);
        }
    }

    @Override
    public void onCts(Channel ch, int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onCts(outer, psn, messageLength, remoteAddress, rkey, flags);
        }
    }

    @Override
    public void onCts(Channel ch, int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onCts(outer, psn, messageLength, remoteAddress, railRkeys, flags);
        }
    }

    @Override
    public void onFin(Channel ch, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onFin(outer, psn, stripeOffset, stripeLength, stripes, stripeIndex);
        }
    }

    @Override
    public void onRtsRead(Channel ch, int psn, int messageLength, long address, int rkey) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onRtsRead(outer, psn, messageLength, address, rkey);
        }
    }

    @Override
    public void onReadFin(Channel ch, int psn, int messageLength, int flags) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onReadFin(outer, psn, messageLength, flags);
        }
    }

    @Override
    public void onReadCompleted(Channel ch, long token) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onReadCompleted(outer, token);
        }
    }

    @Override
    public void onSendCompleted(Channel ch, long token) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onSendCompleted(outer, token);
        }
    }

    @Override
    public void onPeerClose(Channel ch, boolean abort, boolean last, int nextPsn, String reason, int railMask) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onPeerClose(outer, abort, last, nextPsn, reason, railMask);
        }
    }

    @Override
    public void onPeerInboundClosed(Channel ch, int firstUndeliveredPsn) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onPeerInboundClosed(outer, firstUndeliveredPsn);
        }
    }

    @Override
    public void onPeerRailDown(Channel ch, int failedRail) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onPeerRailDown(outer, failedRail);
        }
    }

    @Override
    public void onChannelControl(Channel ch, DirectBuffer buffer, int offset, int length) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onChannelControl(outer, buffer, offset, length);
        }
    }

    @Override
    public void onWriteCompleted(Channel ch, int tag) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onWriteCompleted(outer, tag);
        }
    }

    @Override
    public void onOneSidedControl(Channel ch, FrameType type, DirectBuffer buffer, int frameOffset) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onOneSidedControl(outer, type, buffer, frameOffset);
        }
    }

    @Override
    public long receiveDemand() {
        ChannelEvents l = listener();
        return l == null ? Long.MAX_VALUE : l.receiveDemand();
    }

    @Override
    public void onFailure(Channel ch, RdmaException error) {
        ChannelEvents l = listener();
        if (l != null) {
            l.onFailure(outer, error);
        }
    }
}
