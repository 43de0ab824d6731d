package io.rdmaflux.core.channel;

/** {@link ChannelProvider#rcSendRecv()}: opens {@link RcSubchannel}s. */
final class RcChannelProvider implements ChannelProvider {
    static final RcChannelProvider INSTANCE = new RcChannelProvider();

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

    @Override
    public String toString() {
        return "ChannelProvider{" + kind() + "}";
    }
}
