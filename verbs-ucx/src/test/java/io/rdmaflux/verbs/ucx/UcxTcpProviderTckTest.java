package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;
import org.junit.jupiter.api.BeforeAll;

/** The provider TCK on the ucx provider over UCX's {@code tcp} transport (skipped without UCX). */
class UcxTcpProviderTckTest extends ProviderTck {
    @BeforeAll
    static void needsUcx() {
        UcxTestSupport.assumeUcx();
    }

    @Override
    protected TckFixture createFixture() {
        return new UcxFixture("tcp");
    }
}
