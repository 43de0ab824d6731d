package io.rdmaflux.verbs;

import java.util.Map;
import java.util.Optional;

/**
 * The {@link java.util.ServiceLoader} entry point of a provider
 * ({@code META-INF/services/io.rdmaflux.verbs.RdmaProviderFactory}).
 */
public interface RdmaProviderFactory {
    /** The name users ask for, e.g. {@code soft}. */
    String name();

    /** Higher wins in {@code auto} selection among available providers (hardware above soft). */
    int priority();

    /** Why this provider cannot run here (missing library, no device), or empty when it can. */
    Optional<String> unavailableReason();

    /**
     * Opens a provider.
     *
     * @param options provider-specific settings (string keys and values, as from a command line)
     * @throws ProviderUnavailableException when {@link #unavailableReason()} is not empty
     * @throws VerbsException when an option is invalid; the message names it and the accepted values
     */
    RdmaProvider open(Map<String, String> options);
}
