package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.ProviderUnavailableException;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviderFactory;
import java.util.Map;
import java.util.Optional;

/**
 * {@link java.util.ServiceLoader} entry of the {@code disni} provider (RC verbs on RDMA NICs through
 * DiSNI), priority 10: above {@code ucx} (5) and {@code soft} (0), so {@code auto} takes it wherever it
 * can run and falls back, with one log line, where it cannot ({@link DisniAvailability}: libdisni must
 * load and the kernel must list an RDMA device).
 *
 * <p>Options: see {@link DisniOptions} ({@code addresses}, {@code threading}, {@code mtu},
 * {@code maxInline}, {@code cqEntries}, ...).
 */
public final class DisniProviderFactory implements RdmaProviderFactory {
    /** The provider name used with {@code RdmaProviders.open}. */
    public static final String NAME = "disni";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return 10;
    }

    @Override
    public Optional<String> unavailableReason() {
        return DisniAvailability.unavailableReason();
    }

    /**
     * Opens the provider over DiSNI.
     *
     * @throws ProviderUnavailableException when libdisni or an RDMA device is missing
     * @throws io.rdmaflux.verbs.VerbsException when an option is invalid or no device address is found
     */
    @Override
    public RdmaProvider open(Map<String, String> options) {
        Optional<String> missing = unavailableReason();
        if (missing.isPresent()) {
            throw new ProviderUnavailableException("RDMA provider '" + NAME + "' cannot run here: " + missing.get());
        }
        return DisniProvider.builder().seam(new DisniSeam())
            .options(DisniOptions.parse(options, DisniDeviceDiscovery.discover())).build();
    }
}
