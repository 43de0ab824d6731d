package io.rdmaflux.ud;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.FaultMatrix;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.VirtualTimeMemPair;

/** The fault matrix (issue 20), reliable UD channels on every rail taking their buffers from the nodes' shared pools (48 receive buffers per rail), in-JVM fabric, INVOKER nodes in virtual time, under the UD fault model (datagram loss, duplication, reordering) for the wire-fault rows. */
class FaultMatrixUdMemSrqTest extends FaultMatrix {
    @Override
    protected String kind() {
        return "reliable UD over the node's shared pools";
    }

    @Override
    protected String fabric() {
        return "mem (virtual time)";
    }

    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.channelProvider(new UdChannelProvider()).sharedReceiveQueue(48).sharedSendBuffers(96)).spec(s -> s.channelKind(ChannelKind.RELIABLE_UD));
    }

    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options);
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }

    /** The UD fault model's counters (the RC one's stay 0: the data goes as UD datagrams). */
    @Override
    protected String wireFaultNote(ConnectionTckFixture fx) {
        return fx.udFaultCounters().toString();
    }
}
