package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.tck.RealTimeProviderPair;
import org.agrona.concurrent.SystemNanoClock;

/**
 * The TCK fixture of the ucx provider: two INVOKER providers (host A and host B, each its own UCP
 * worker) on the real clock, over the UCX transports {@code tls}. {@link #progress()} runs one pass of
 * both (each pass progresses both workers); {@link #advanceNs} spins until that much real time passed
 * ({@link RealTimeProviderPair}).
 */
final class UcxFixture extends RealTimeProviderPair<UcxProvider> {
    UcxFixture(String tls) {
        this(tls, UcxProvider.Put.AUTO);
    }

    /** As {@link #UcxFixture(String)}, with the provider option {@code put}. */
    UcxFixture(String tls, UcxProvider.Put put) {
        this(tls, b -> b.put(put));
    }

    /** As {@link #UcxFixture(String)}, with further builder settings applied to both providers. */
    UcxFixture(String tls, java.util.function.UnaryOperator<UcxProvider.Builder> settings) {
        super(side -> settings.apply(UcxProvider.builder().name("ucx-" + side).tls(tls).clock(new SystemNanoClock())
            .threadingMode(ThreadingMode.INVOKER)).build());
    }
}
