package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.tck.TckFixture;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.util.List;
import java.util.Map;
import org.agrona.concurrent.SystemNanoClock;

/**
 * As {@link DisniSoftFixture}, but everything on its own threads in real time, as the provider runs by
 * default: both disni providers DEDICATED (a thread each for CM events and CQ drains) over soft
 * providers that are DEDICATED too. The test thread only posts and polls, so the provider's locking
 * between its thread and the caller's is exercised.
 */
final class DisniDedicatedFixture implements TckFixture {
    /**
     * The soft NICs' retry timer floor in real time, ns: 8 tries of 20 ms outlast a thread kept off the
     * CPU on a loaded host; on hardware the NIC's ACK timeout (the CM's, tens of ms) plays this part, since
     * DiSNI cannot set {@code retryTimeoutNs}.
     */
    static final long REAL_TIME_RETRY_FLOOR_NS = 20_000_000;

    private final VerbsLeakCheck leaks = VerbsLeakCheck.begin();
    private final SoftTwoNodes nodes = SoftTwoNodes.create(1, RailConfig.UNSHAPED,
        b -> b.clock(new SystemNanoClock()).threadingMode(ThreadingMode.DEDICATED).minRetryTimeoutNs(REAL_TIME_RETRY_FLOOR_NS));
    private final SoftSeam seam = new SoftSeam(Map.of(DisniSoftFixture.IP_A, nodes.a().devices().get(0),
        DisniSoftFixture.IP_B, nodes.b().devices().get(0)));
    private final DisniProvider a = open("ta", DisniSoftFixture.IP_A);
    private final DisniProvider b = open("tb", DisniSoftFixture.IP_B);

    private DisniProvider open(String name, String ip) {
        return DisniProvider.builder().name(name).seam(seam).options(DisniOptions.parse(Map.of("addresses", ip), List.of())).build();
    }

    @Override
    public Device deviceA() {
        return a.devices().get(0);
    }

    @Override
    public Device deviceB() {
        return b.devices().get(0);
    }

    @Override
    public int progress() {
        return 0; // every party has its own thread
    }

    @Override
    public void advanceNs(long ns) {
        long until = System.nanoTime() + ns;
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }

    @Override
    public long nowNs() {
        return System.nanoTime();
    }

    @Override
    public boolean virtualTime() {
        return false;
    }

    @Override
    public void assertNoLeaks() {
        seam.assertAllReleased();
        if (a.lastError() != null || b.lastError() != null) {
            throw new AssertionError("a provider thread caught an error", a.lastError() != null ? a.lastError() : b.lastError());
        }
        leaks.assertClean();
    }

    @Override
    public void close() {
        try {
            a.close();
            b.close();
        } finally {
            nodes.close();
        }
    }
}
