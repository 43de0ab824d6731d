package io.rdmaflux.eager;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTck;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.VirtualTimeMemPair;

/** The Connection TCK, unchanged, over the eager RDMA kind on the in-JVM fabric, INVOKER nodes, virtual time. */
class ConnectionTckEagerMemInvokerTest extends ConnectionTck {
    /** Every test's options offer the eager kind on both nodes and ask for it on every rail. */
    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.channelProvider(new EagerChannelProvider())).spec(s -> s.channelKind(ChannelKind.EAGER_RDMA));
    }

    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options);
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
