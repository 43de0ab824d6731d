package io.rdmaflux.eager;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTck;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.RealTimePair;

/** The Connection TCK, unchanged, over the eager RDMA kind on the IP fabric over 127.0.0.1, DEDICATED nodes, real time. */
class ConnectionTckEagerNetLoopbackTest extends ConnectionTck {
    /** Every test's options offer the eager kind on both nodes and ask for it on every rail. */
    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.channelProvider(new EagerChannelProvider())).spec(s -> s.channelKind(ChannelKind.EAGER_RDMA));
    }

    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return RealTimePair.net(options);
    }
}
