package io.rdmaflux.verbs.testing;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension: fails a test that leaves soft-provider resources (memory regions, allocated
 * off-heap bytes, QPs, CQs, providers) or rdmaflux threads behind. Runs after the test's own
 * {@code @AfterEach} methods, so close things there.
 */
public final class NoLeaksExtension implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(NoLeaksExtension.class);

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("check", VerbsLeakCheck.begin());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        VerbsLeakCheck check = context.getStore(NS).get("check", VerbsLeakCheck.class);
        if (check != null) {
            check.assertClean();
        }
    }
}
