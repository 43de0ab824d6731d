package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;

/** The provider TCK on the ucx provider over UCX's {@code tcp} transport (skipped without UCX). */
class UcxTcpProviderTckTest extends ProviderTck {
    @Override
    protected TckFixture createFixture() {
        UcxTestSupport.assumeUcx();
        return new UcxFixture("tcp");
    }
}
