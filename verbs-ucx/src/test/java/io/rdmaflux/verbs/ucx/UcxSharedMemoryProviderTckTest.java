package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;
import org.junit.jupiter.api.BeforeAll;

/** The provider TCK on the ucx provider over UCX shared memory ({@code sm,self}) (skipped without UCX). */
class UcxSharedMemoryProviderTckTest extends ProviderTck {
    @BeforeAll
    static void needsUcx() {
        UcxTestSupport.assumeUcx();
    }

    @Override
    protected TckFixture createFixture() {
        return new UcxFixture("sm,self");
    }
}
