package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.tck.TckFixture;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.agrona.concurrent.SystemNanoClock;

/**
 * The TCK fixture of the ucx provider: two INVOKER providers (host A and host B, each its own UCP
 * worker) on the real clock, over the UCX transports {@code tls}. {@link #progress()} runs one pass of
 * both (each pass progresses both workers); {@link #advanceNs} spins until that much real time passed.
 */
final class UcxFixture implements TckFixture {
    private final VerbsLeakCheck leaks = VerbsLeakCheck.begin();
    private final SystemNanoClock clock = new SystemNanoClock();
    final UcxProvider a;
    final UcxProvider b;

    UcxFixture(String tls) {
        a = UcxProvider.builder().name("ucx-a").tls(tls).clock(clock).threadingMode(ThreadingMode.INVOKER).build();
        UcxProvider pb;
        try {
            pb = UcxProvider.builder().name("ucx-b").tls(tls).clock(clock).threadingMode(ThreadingMode.INVOKER).build();
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
        long now = clock.nanoTime();
        return a.progress(now) + b.progress(now);
    }

    @Override
    public void advanceNs(long ns) {
        long until = clock.nanoTime() + ns;
        while (clock.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }

    @Override
    public long nowNs() {
        return clock.nanoTime();
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
        a.close();
        b.close();
    }
}
