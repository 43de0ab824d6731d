package io.rdmaflux.core.internal.rc;

import org.jspecify.annotations.Nullable;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.ChannelProvider;
import io.rdmaflux.core.channel.ChannelSetup;
/** {@link ChannelProvider#rcSendRecv()}: opens {@link RcSubchannel}s. Internal: use {@code ChannelProvider.rcSendRecv()}. */
public final class RcChannelProvider implements ChannelProvider {
    public static final RcChannelProvider INSTANCE = new RcChannelProvider();

    private RcChannelProvider() {
    }

    @Override
    public ChannelKind kind() {
        return ChannelKind.RC_SEND_RECV;
    }

    @Override
    public Channel open(ChannelSetup s) {
        return new RcSubchannel(s.rail(), s.pd(), s.port(), s.bufferBytes(), s.receiveBuffers(), s.controlBuffers(),
            s.sendBuffers(), s.creditThreshold(), s.timeouts(), s.maxWrites());
    }

    /** Opens an RC channel over the rail's shared receive queue and send region (no pools of its own). */
    public Channel open(ChannelSetup s, io.rdmaflux.core.internal.srq.@Nullable RailSharedBuffers shared,
                        io.rdmaflux.core.internal.cq.@Nullable SharedCompletionQueue sharedCq) {
        return new RcSubchannel(s.rail(), s.pd(), s.port(), s.bufferBytes(), s.receiveBuffers(), s.controlBuffers(),
            s.sendBuffers(), s.creditThreshold(), s.timeouts(), s.maxWrites(), shared, sharedCq);
    }

    @Override
    public String toString() {
        return "ChannelProvider{" + kind() + "}";
    }
}
