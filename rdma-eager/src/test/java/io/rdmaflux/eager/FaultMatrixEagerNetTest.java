package io.rdmaflux.eager;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.FaultMatrix;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.RealTimePair;

/** The fault matrix (issue 20), eager RDMA channels on every rail, IP fabric on loopback, real time. */
class FaultMatrixEagerNetTest extends FaultMatrix {
    @Override
    protected String kind() {
        return "eager RDMA";
    }

    @Override
    protected String fabric() {
        return "net loopback";
    }

    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.channelProvider(new EagerChannelProvider())).spec(s -> s.channelKind(ChannelKind.EAGER_RDMA));
    }

    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return RealTimePair.net(options);
    }

    @Override
    protected boolean supportsRailFaults() {
        return false;
    }
}
