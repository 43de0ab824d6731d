package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;

/**
 * The provider TCK on the {@code disni} provider over the {@link SoftSeam} test double: everything of
 * the provider but the final DiSNI/JNI calls. UD, SRQ and port-state cases are skipped by the TCK's
 * own capability checks (the provider offers none of them).
 */
class DisniSoftProviderTckTest extends ProviderTck {
    @Override
    protected TckFixture createFixture() {
        return new DisniSoftFixture();
    }
}
