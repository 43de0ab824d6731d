package io.rdmaflux.ud;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTck;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.RealTimePair;

/** The Connection TCK, unchanged, over reliable UD on the IP fabric (UD over UDP) over 127.0.0.1, DEDICATED nodes, real time. */
class ConnectionTckUdNetLoopbackTest extends ConnectionTck {
    /** Every test's options offer reliable UD on both nodes and ask for it on every rail. */
    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.channelProvider(new UdChannelProvider())).spec(s -> s.channelKind(ChannelKind.RELIABLE_UD));
    }

    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return RealTimePair.net(options);
    }
}
