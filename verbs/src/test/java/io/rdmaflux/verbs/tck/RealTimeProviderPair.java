package io.rdmaflux.verbs.tck;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;

import java.util.function.Function;

/**
 * What every real-time {@link TckFixture} over two provider instances shares: host A and host B
 * (device 0 of each), opened in order with the first closed again if the second fails, a leak check
 * begun before either opened, {@link #progress()} running one pass of each INVOKER provider (a provider
 * with its own threads progresses itself), and {@link #advanceNs} spinning through real time so that
 * frames in flight in the kernel or the transport get their chance to arrive.
 *
 * @param <P> the provider type the subclass needs (to reach its ports' fault controls)
 */
public abstract class RealTimeProviderPair<P extends RdmaProvider> implements TckFixture {
    private final VerbsLeakCheck leaks = VerbsLeakCheck.begin();
    protected final P a;
    protected final P b;

    /** @param open opens host {@code "a"} or {@code "b"} */
    protected RealTimeProviderPair(Function<String, P> open) {
        a = open.apply("a");
        P pb;
        try {
            pb = open.apply("b");
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
        b = pb;
    }

    /** Host A's provider. */
    public P hostA() {
        return a;
    }

    /** Host B's provider. */
    public P hostB() {
        return b;
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
