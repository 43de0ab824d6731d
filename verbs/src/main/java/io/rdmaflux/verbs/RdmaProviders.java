package io.rdmaflux.verbs;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.logging.Logger;

/**
 * Finds providers by name through {@link ServiceLoader}.
 *
 * <p>{@code auto} picks the available provider with the highest priority (hardware before
 * {@code soft}) and logs one line when it falls back.
 */
public final class RdmaProviders {
    /** The name that selects the best available provider. */
    public static final String AUTO = "auto";

    private static final Logger LOG = Logger.getLogger(RdmaProviders.class.getName());

    private RdmaProviders() {
    }

    /** Every provider factory on the class path, highest priority first. */
    public static List<RdmaProviderFactory> factories() {
        List<RdmaProviderFactory> list = new ArrayList<>();
        ServiceLoader.load(RdmaProviderFactory.class, RdmaProviders.class.getClassLoader()).forEach(list::add);
        list.sort(Comparator.comparingInt(RdmaProviderFactory::priority).reversed());
        return list;
    }

    /** Opens the provider with the given name (or {@code auto}) with default options. */
    public static RdmaProvider open(String name) {
        return open(name, Map.of());
    }

    /**
     * Opens the provider with the given name, or the best available one for {@code auto}.
     *
     * @throws ProviderUnavailableException if no provider has that name, or it cannot run here;
     *     the message lists the known names or says what is missing
     */
    public static RdmaProvider open(String name, Map<String, String> options) {
        List<RdmaProviderFactory> all = factories();
        if (AUTO.equals(name)) {
            StringBuilder skipped = new StringBuilder();
            for (RdmaProviderFactory f : all) {
                var reason = f.unavailableReason();
                if (reason.isEmpty()) {
                    if (skipped.length() > 0) {
                        LOG.info("rdmaflux: provider auto-selection chose '" + f.name() + "'" + skipped);
                    }
                    return f.open(options);
                }
                skipped.append("; '").append(f.name()).append("' unavailable: ").append(reason.get());
            }
            throw new ProviderUnavailableException("no RDMA provider is available" + skipped
                + "; put rdmaflux-verbs (which holds the 'soft' provider) on the class path");
        }
        for (RdmaProviderFactory f : all) {
            if (f.name().equals(name)) {
                var reason = f.unavailableReason();
                if (reason.isPresent()) {
                    throw new ProviderUnavailableException("RDMA provider '" + name + "' cannot run here: " + reason.get());
                }
                return f.open(options);
            }
        }
        throw new ProviderUnavailableException("unknown RDMA provider '" + name + "'; known providers are "
            + all.stream().map(RdmaProviderFactory::name).toList() + " and '" + AUTO + "'");
    }
}
