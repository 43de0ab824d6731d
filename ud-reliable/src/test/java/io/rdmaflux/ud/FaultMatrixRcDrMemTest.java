package io.rdmaflux.ud;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.FaultMatrix;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.VirtualTimeMemPair;

/**
 * The fault matrix (issue 20), RC checked end to end by DR ({@link ChannelKind#RC_DR}) on every rail, in-JVM fabric,
 * INVOKER nodes in virtual time, under the RC fault model (the wire's corruption is the kind the RC NIC's ICRC catches;
 * damage it does not see is {@link RcDrChannelTest}'s).
 */
class FaultMatrixRcDrMemTest extends FaultMatrix {
    @Override
    protected String kind() {
        return "RC + DR";
    }

    @Override
    protected String fabric() {
        return "mem (virtual time)";
    }

    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.channelProvider(new RcDrChannelProvider())).spec(s -> s.channelKind(ChannelKind.RC_DR));
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
