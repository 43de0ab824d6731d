package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;

/** The provider TCK on the ucx provider over UCX shared memory ({@code sm,self}) (skipped without UCX). */
class UcxSharedMemoryProviderTckTest extends ProviderTck {
    @Override
    protected TckFixture createFixture() {
        UcxTestSupport.assumeUcx();
        return new UcxFixture("sm,self");
    }
}
