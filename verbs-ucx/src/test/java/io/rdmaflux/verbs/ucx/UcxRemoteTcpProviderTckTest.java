package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;

/**
 * The provider TCK on the ucx provider over UCX {@code tcp} with {@code cm=tcp}: two providers that
 * share no directory and no UCX context, each resolving the other's device from a TCP CM exchange
 * (skipped without UCX).
 */
class UcxRemoteTcpProviderTckTest extends ProviderTck {
    @Override
    protected TckFixture createFixture() {
        UcxTestSupport.assumeUcx();
        return new UcxRemoteFixture("tcp");
    }
}
