package io.rdmaflux.ud;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTck;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.VirtualTimeMemPair;

/**
 * The Connection TCK, unchanged, over reliable UD on nodes with a shared receive queue (in-JVM fabric, INVOKER
 * nodes, virtual time): every UD channel takes its receive buffers from its node's reliable UD pool of the rail and
 * its send buffers from the rail's shared region, registering none of its own. The pool is small (48 buffers, 8 of
 * them the control reserve), as in the RC SRQ TCK, so the TCK's probe connection and the one under test compete for it.
 */
class ConnectionTckUdMemInvokerSrqTest extends ConnectionTck {
    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.channelProvider(new UdChannelProvider()).sharedReceiveQueue(48).sharedSendBuffers(96))
            .spec(s -> s.channelKind(ChannelKind.RELIABLE_UD));
    }

    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options);
    }
}
