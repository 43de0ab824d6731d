package io.rdmaflux.ud;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.FaultMatrix;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.VirtualTimeMemPair;
import io.rdmaflux.ud.dr.DrStats;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** The fault matrix (issue 20), reliable UD channels on every rail, in-JVM fabric, INVOKER nodes in virtual time, under the UD fault model (datagram loss, duplication, reordering) for the wire-fault rows. */
class FaultMatrixUdMemTest extends FaultMatrix {
    @Override
    protected String kind() {
        return "reliable UD";
    }

    @Override
    protected String fabric() {
        return "mem (virtual time)";
    }

    /** The channel providers of the nodes of this cell's pair (JUnit makes an instance per cell). */
    private final List<UdChannelProvider> providers = new CopyOnWriteArrayList<>();

    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> {
            UdChannelProvider p = new UdChannelProvider();
            providers.add(p);
            b.channelProvider(p);
        }).spec(s -> s.channelKind(ChannelKind.RELIABLE_UD));
    }

    /**
     * The UD fault model's corrupted datagrams, and those the receiving DR endpoints dropped: by their CRC32C
     * ({@link DrStats#corruptedDropped()}), as truncated when the flipped byte was the length field
     * ({@link DrStats#malformedDropped()}), or by the rail's tag check when it was the 4-byte tag in front of
     * the DR datagram ({@link UdChannel#foreignDatagramsDropped()}, one rail per channel here).
     */
    @Override
    protected Corruption corruption(ConnectionTckFixture fx) {
        long caught = 0;
        long retransmitted = 0;
        for (UdChannelProvider p : providers) {
            for (UdChannel ch : p.openChannels()) {
                DrStats st = ch.drStats();
                caught += ch.foreignDatagramsDropped() + (st == null ? 0 : st.corruptedDropped() + st.malformedDropped());
                retransmitted += st == null ? 0 : st.vfragsRetransmitted();
            }
        }
        return new Corruption(fx.udFaultCounters().datagramsCorrupted(), caught,
            "corrupted datagrams dropped by reliable UD's CRC32C check (DR stats; " + retransmitted + " VFRAGs retransmitted)");
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
