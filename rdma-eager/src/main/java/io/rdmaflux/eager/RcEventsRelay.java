package io.rdmaflux.eager;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.RelayingChannelEvents;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The events of the RC send/receive channel an {@link EagerChannel} decorates, reported to the
 * connection as the eager channel's own: every event is relayed (a frame that came over send/receive
 * also tells the polling set the peer is busy, seed 001 &sect;4.6, and is reported only after the ring frames
 * placed before it, {@link RingPolling#pollBefore}), while the eager protocol's own control frames go to
 * {@link RingSenderControl}, and the ring's WRITE completions ({@link RingSender#isRingTag}) and the RC
 * channel's failure to the {@link EagerChannel}. One-sided work (WRITE completions with other tags, READ
 * completions, one-sided control frames) passes through to the connection.
 *
 * <p><b>Concurrency:</b> the progress thread of the channel, as every {@link ChannelEvents}.
 */
final class RcEventsRelay extends RelayingChannelEvents {
    private final EagerChannel channel;
    private final RingPolling polling;
    private final RingSenderControl control;
    private long fallbackFramesReceived;

    RcEventsRelay(EagerChannel channel, RingPolling polling, RingSenderControl control) {
        super(channel);
        this.channel = channel;
        this.polling = polling;
        this.control = control;
    }

    /** DATA and RTS frames that came over send/receive. */
    long fallbackFramesReceived() {
        return fallbackFramesReceived;
    }

    /**
     * A frame of {@code psn} came over send/receive: counted, the polling set hears the peer is busy
     * ({@code arrival}), and the ring frames placed before it are reported first ({@link #beforeFallbackFrame}).
     */
    private void onFallbackFrame(boolean arrival, int psn) {
        fallbackFramesReceived++;
        if (arrival) {
            polling.onFallbackArrival();
        }
        beforeFallbackFrame(psn);
    }

    /**
     * Before a frame of {@code psn} from the RC channel is reported: the ring frames already placed whose PSN is
     * before it go first, so the rail's frames reach the connection in the order they were sent
     * ({@link RingPolling#pollBefore}).
     */
    private void beforeFallbackFrame(int psn) {
        ChannelEvents l = channel.listener();
        if (l != null && !channel.isClosed()) {
            polling.pollBefore(psn, l);
        }
    }

    @Override
    protected @Nullable ChannelEvents listener() {
        return channel.listener();
    }

    @Override
    public void onData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn, boolean first,
                       boolean last, int messageLength) {
        onFallbackFrame(first, psn);
        super.onData(ch, slot, buffer, payloadOffset, payloadLength, psn, first, last, messageLength);
    }

    @Override
    public void onPackedData(Channel ch, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count) {
        onFallbackFrame(true, firstPsn);
        super.onPackedData(ch, slot, buffer, payloadOffset, firstPsn, count);
    }

    @Override
    public void onRts(Channel ch, int psn, int messageLength) {
        onFallbackFrame(true, psn);
        super.onRts(ch, psn, messageLength);
    }

    @Override
    public void onRtsRead(Channel ch, int psn, int messageLength, long address, int rkey) {
        onFallbackFrame(true, psn);
        super.onRtsRead(ch, psn, messageLength, address, rkey);
    }

    @Override
    public void onFin(Channel ch, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex) {
        // a rendezvous FIN completes message psn: the ring frames before it first, as for a DATA frame
        beforeFallbackFrame(psn);
        super.onFin(ch, psn, stripeOffset, stripeLength, stripes, stripeIndex);
    }

    @Override
    public void onChannelControl(Channel ch, DirectBuffer buffer, int offset, int length) {
        control.onControl(buffer, offset, length);
    }

    @Override
    public void onWriteCompleted(Channel ch, int tag) {
        if (RingSender.isRingTag(tag)) {
            channel.onRingWriteCompleted(tag);
        } else {
            super.onWriteCompleted(ch, tag);
        }
    }

    @Override
    public void onFailure(Channel ch, RdmaException error) {
        channel.onRcFailure(error);
    }
}
