package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.ProviderUnavailableException;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviderFactory;
import java.util.Map;
import java.util.Optional;

/**
 * {@link java.util.ServiceLoader} entry of the {@code disni} provider (RC verbs on RDMA NICs through
 * DiSNI), priority 10: above {@code ucx} (5) and {@code soft} (0), so {@code auto} takes it wherever it
 * can run and falls back, with one log line, where it cannot.
 *
 * <p><b>State:</b> this build probes for DiSNI ({@link DisniAvailability}) but does not yet carry the
 * binding of the verbs SPI onto DiSNI's {@code RdmaCmId}/{@code IbvQP}/{@code SVCPostSend}
 * (issue 17); on a host where libdisni and a device are present, {@link #unavailableReason()} says so,
 * so that {@code auto} falls back instead of failing.
 */
public final class DisniProviderFactory implements RdmaProviderFactory {
    /** The provider name used with {@code RdmaProviders.open}. */
    public static final String NAME = "disni";

    static final String BINDING_MISSING = "libdisni and an RDMA device are present, but this build of rdmaflux "
        + "does not carry the DiSNI verbs binding yet (issue 17); use provider 'ucx' (UCX drives the same NIC) or 'soft'";

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
        Optional<String> missing = DisniAvailability.unavailableReason();
        return missing.isPresent() ? missing : Optional.of(BINDING_MISSING);
    }

    @Override
    public RdmaProvider open(Map<String, String> options) {
        throw new ProviderUnavailableException("RDMA provider '" + NAME + "' cannot run here: " + unavailableReason().orElseThrow());
    }
}
