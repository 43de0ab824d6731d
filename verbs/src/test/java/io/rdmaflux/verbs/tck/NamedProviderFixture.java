package io.rdmaflux.verbs.tck;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.util.Map;

/**
 * A real-time {@link TckFixture} over any provider opened by name: two instances from
 * {@link RdmaProviders#open(String, Map)} (host A and host B; on hardware both see the same HCAs and
 * talk through them in loopback), device 0 of each. An INVOKER provider is progressed by
 * {@link #progress()}; any other progresses itself and {@code progress()} returns 0 while
 * {@link #advanceNs} spins through real time.
 */
public final class NamedProviderFixture implements TckFixture {
    private final VerbsLeakCheck leaks = VerbsLeakCheck.begin();
    private final RdmaProvider a;
    private final RdmaProvider b;

    /**
     * Opens two providers called {@code name} with {@code options}.
     *
     * @throws io.rdmaflux.verbs.ProviderUnavailableException when the provider is unknown or cannot run here
     */
    public NamedProviderFixture(String name, Map<String, String> options) {
        a = RdmaProviders.open(name, options);
        RdmaProvider pb;
        try {
            pb = RdmaProviders.open(name, options);
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
        b = pb;
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
        long now = System.nanoTime();
        int work = 0;
        if (a.threadingMode() == ThreadingMode.INVOKER) {
            work += a.progress(now);
        }
        if (b.threadingMode() == ThreadingMode.INVOKER) {
            work += b.progress(now);
        }
        return work;
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
        leaks.assertClean();
    }

    @Override
    public void close() {
        try {
            a.close();
        } finally {
            b.close();
        }
    }
}
