package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.tck.TckFixture;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;

/**
 * Two {@code disni} providers (host A at {@value #IP_A}, host B at {@value #IP_B}) on the
 * {@link SoftSeam} test double over two soft providers on one virtual clock, all in INVOKER mode:
 * deterministic, no threads. {@link #progress()} runs one pass of the soft NICs and of both disni
 * providers (CM events, CQ drains). The addresses are only keys of the double: nothing is sent on any
 * network.
 */
final class DisniSoftFixture implements TckFixture {
    static final String IP_A = "127.0.1.1";
    static final String IP_B = "127.0.2.1";

    private final VerbsLeakCheck leaks = VerbsLeakCheck.begin();
    private final SoftTwoNodes nodes = SoftTwoNodes.create();
    final SoftSeam seam = new SoftSeam(Map.of(IP_A, nodes.a().devices().get(0), IP_B, nodes.b().devices().get(0)));
    final DisniProvider a = open("a", IP_A);
    final DisniProvider b = open("b", IP_B);

    private DisniProvider open(String name, String ip) {
        return DisniProvider.builder().name(name).seam(seam).options(DisniOptions.invoker(List.of(address(ip)))).build();
    }

    static InetAddress address(String ip) {
        try {
            return InetAddress.getByName(ip);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(ip, e);
        }
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
        long now = nodes.clock().nanoTime();
        return nodes.progress() + a.progress(now) + b.progress(now);
    }

    @Override
    public void advanceNs(long ns) {
        nodes.clock().advance(ns);
    }

    @Override
    public long nowNs() {
        return nodes.clock().nanoTime();
    }

    @Override
    public boolean virtualTime() {
        return true;
    }

    @Override
    public void assertNoLeaks() {
        seam.assertAllReleased();
        if (a.allocatedBytes() != 0 || b.allocatedBytes() != 0) {
            throw new AssertionError("disni region memory not freed: a " + a.allocatedBytes() + " bytes, b " + b.allocatedBytes());
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
