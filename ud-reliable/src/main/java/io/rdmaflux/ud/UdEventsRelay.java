package io.rdmaflux.ud;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.channel.RelayingChannelEvents;
import org.jspecify.annotations.Nullable;

/**
 * The events of the RC send/receive channel a {@link UdChannel} wraps, reported to the connection as the
 * {@link UdChannel}'s own (the connection knows the channel it opened, not the one inside it). Every event is
 * relayed unchanged but for its channel argument.
 *
 * <p><b>Concurrency:</b> the progress thread of the channel, as every {@link ChannelEvents}; the listener is
 * set once, before the channel connects.
 */
final class UdEventsRelay extends RelayingChannelEvents {
    private volatile @Nullable ChannelEvents listener;

    UdEventsRelay(Channel outer) {
        super(outer);
    }

    void listener(ChannelEvents l) {
        this.listener = l;
    }

    @Override
    protected @Nullable ChannelEvents listener() {
        return listener;
    }
}
