package io.rdmaflux.ud;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.FaultMatrix;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.RealTimePair;

/** The fault matrix (issue 20), reliable UD channels on every rail, IP fabric (UD over UDP) on loopback, real time. */
class FaultMatrixUdNetTest extends FaultMatrix {
    @Override
    protected String kind() {
        return "reliable UD";
    }

    @Override
    protected String fabric() {
        return "net loopback";
    }

    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.channelProvider(new UdChannelProvider())).spec(s -> s.channelKind(ChannelKind.RELIABLE_UD));
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
