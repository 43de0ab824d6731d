package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.tck.ProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;

/** The provider TCK on the soft provider's IP fabric over loopback (UD over UDP, RC over TCP). */
class NetLoopbackProviderTckTest extends ProviderTck {
    @Override
    protected TckFixture createFixture() {
        return new NetLoopbackFixture();
    }
}
