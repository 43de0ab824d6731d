package io.rdmaflux.core.tck;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmaflux.verbs.tck.SelectedProviderTck;
import java.util.Map;

/**
 * The Connection TCK over whichever installed provider {@code -Drdmaflux.provider=NAME} (or
 * {@code RDMAFLUX_PROVIDER}) names, with the options of {@code -Drdmaflux.provider.options}, as
 * {@link SelectedProviderTck} does for the provider TCK: two providers opened by name, DEDICATED nodes
 * ({@link RealTimePair#named}). Skipped with no name set; cases needing more rails than the option
 * {@code ports} (default 1) are skipped; rail failure and rail faults are not exercised. Each module
 * with a provider holds a one-line subclass, so its class path has the provider on it.
 */
public abstract class SelectedProviderConnectionTck extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        String name = SelectedProviderTck.selectedProvider();
        assumeTrue(name != null, "no provider selected: run with -D" + SelectedProviderTck.PROPERTY + "=NAME");
        Map<String, String> providerOptions = SelectedProviderTck.parseOptions(System.getProperty(SelectedProviderTck.OPTIONS_PROPERTY));
        int ports = Integer.parseInt(providerOptions.getOrDefault("ports", "1"));
        assumeTrue(options.rails() <= ports, () -> options.rails() + " rails need option ports=" + options.rails() + " (the provider has " + ports + ")");
        return RealTimePair.named(options, name, providerOptions);
    }
}
