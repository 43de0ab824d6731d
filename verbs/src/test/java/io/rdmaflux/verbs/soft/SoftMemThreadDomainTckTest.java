package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;

/** The provider TCK on the mem fabric with lock-free posting (thread domain: one poster per QP, as the TCK is). */
class SoftMemThreadDomainTckTest extends ProviderTck {
    @Override
    protected TckFixture createFixture() {
        return new SoftMemFixture(1, RailConfig.UNSHAPED, b -> b.threadDomain(true));
    }
}
