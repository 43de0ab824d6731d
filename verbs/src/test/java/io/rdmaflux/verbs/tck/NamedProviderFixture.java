package io.rdmaflux.verbs.tck;

import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import java.util.Map;

/**
 * A real-time {@link TckFixture} over any provider opened by name: two instances from
 * {@link RdmaProviders#open(String, Map)} (host A and host B; on hardware both see the same HCAs and
 * talk through them in loopback), device 0 of each. An INVOKER provider is progressed by
 * {@link #progress()}; any other progresses itself and {@code progress()} returns 0 while
 * {@link #advanceNs} spins through real time.
 */
public final class NamedProviderFixture extends RealTimeProviderPair<RdmaProvider> {
    /**
     * Opens two providers called {@code name} with {@code options}.
     *
     * @throws io.rdmaflux.verbs.ProviderUnavailableException when the provider is unknown or cannot run here
     */
    public NamedProviderFixture(String name, Map<String, String> options) {
        super(side -> RdmaProviders.open(name, options));
    }
}
