package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;

/** The provider TCK on the soft provider's in-JVM fabric. */
class SoftMemProviderTckTest extends ProviderTck {
    @Override
    protected TckFixture createFixture() {
        return new SoftMemFixture(1, RailConfig.UNSHAPED);
    }
}
