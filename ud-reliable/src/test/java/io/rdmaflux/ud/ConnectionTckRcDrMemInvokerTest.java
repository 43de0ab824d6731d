package io.rdmaflux.ud;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTck;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.VirtualTimeMemPair;

/** The Connection TCK, unchanged, over RC checked end to end by DR ({@link ChannelKind#RC_DR}), in-JVM fabric, INVOKER nodes, virtual time. */
class ConnectionTckRcDrMemInvokerTest extends ConnectionTck {
    /** Every test's options offer RC + DR on both nodes and ask for it on every rail. */
    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.channelProvider(new RcDrChannelProvider())).spec(s -> s.channelKind(ChannelKind.RC_DR));
    }

    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options);
    }

    /** The RC wire-fault profiles apply: the datagrams ride an RC queue pair, which recovers them as RC does. */
    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
