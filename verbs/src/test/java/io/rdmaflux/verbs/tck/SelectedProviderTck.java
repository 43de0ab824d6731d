package io.rdmaflux.verbs.tck;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The provider TCK against whichever installed provider the user names, so that a stack (a NIC, its
 * driver, the native library) is qualified in one command:
 *
 * <pre>
 * mvn -B -pl verbs-disni -am test -Drdmaflux.provider=disni -Dtest=DisniSelectedProviderTckTest -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * <p>The name comes from the system property {@value #PROPERTY}, else the environment variable
 * {@value #ENV}; provider options from {@value #OPTIONS_PROPERTY} ({@code key=value,key=value}).
 * With no name set, every test is skipped (JUnit assumption). A name that is set but cannot be opened
 * fails every test with the provider's own message (unknown name, missing library, no device),
 * since the user asked for it. Each provider module holds a one-line subclass, so its class path
 * has the provider on it.
 */
public abstract class SelectedProviderTck extends ProviderTck {
    /** System property naming the provider under test. */
    public static final String PROPERTY = "rdmaflux.provider";
    /** Environment variable naming the provider under test, when the property is not set. */
    public static final String ENV = "RDMAFLUX_PROVIDER";
    /** System property with provider options, {@code key=value,key=value}. */
    public static final String OPTIONS_PROPERTY = "rdmaflux.provider.options";

    /** The provider the user selected, or null. */
    public static @Nullable String selectedProvider() {
        String name = System.getProperty(PROPERTY);
        if (name == null || name.isBlank()) {
            name = System.getenv(ENV);
        }
        return name == null || name.isBlank() ? null : name.trim();
    }

    /**
     * Parses {@code key=value,key=value}; a piece without {@code =} continues the previous value, so a
     * value may hold commas ({@code tls=sm,self,threading=invoker} is {@code tls=sm,self} and
     * {@code threading=invoker}).
     *
     * @throws IllegalArgumentException naming a first piece without {@code =}
     */
    public static Map<String, String> parseOptions(@Nullable String text) {
        Map<String, String> options = new LinkedHashMap<>();
        if (text == null || text.isBlank()) {
            return options;
        }
        String lastKey = null;
        for (String entry : text.split(",")) {
            int eq = entry.indexOf('=');
            if (eq <= 0) {
                if (lastKey == null) {
                    throw new IllegalArgumentException(OPTIONS_PROPERTY + " entry '" + entry + "' is not key=value; write e.g. -D"
                        + OPTIONS_PROPERTY + "=tls=tcp,devices=1");
                }
                options.put(lastKey, options.get(lastKey) + "," + entry.trim());
                continue;
            }
            lastKey = entry.substring(0, eq).trim();
            options.put(lastKey, entry.substring(eq + 1).trim());
        }
        return options;
    }

    @Override
    protected TckFixture createFixture() {
        String name = selectedProvider();
        assumeTrue(name != null, "no provider selected: run with -D" + PROPERTY + "=NAME (or " + ENV + "=NAME)");
        return new NamedProviderFixture(name, parseOptions(System.getProperty(OPTIONS_PROPERTY)));
    }
}
