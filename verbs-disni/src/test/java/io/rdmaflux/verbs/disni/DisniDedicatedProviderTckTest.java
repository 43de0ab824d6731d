package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;

/** The provider TCK on {@code disni} providers in their default DEDICATED mode, over the double, in real time. */
class DisniDedicatedProviderTckTest extends ProviderTck {
    @Override
    protected TckFixture createFixture() {
        return new DisniDedicatedFixture();
    }
}
