package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.tck.NamedProviderFixture;
import io.rdmaflux.verbs.tck.SelectedProviderTck;
import io.rdmaflux.verbs.tck.TckFixture;

/**
 * {@link SelectedProviderTck} with {@code ucx} (and {@code soft}) on the class path:
 * {@code mvn -B -pl verbs-ucx -am test -Drdmaflux.provider=ucx -Drdmaflux.provider.options=tls=tcp,cm=tcp,threading=invoker
 * -Dtest=UcxSelectedProviderTckTest -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>With {@code cm=tcp} the two providers first make one exchange through their TCP connection
 * managers on loopback ({@link UcxRemoteFixture#introduce}): the provider TCK connects queue pairs
 * without a connection manager, and a {@code cm=tcp} provider reaches a peer's device only after an
 * exchange with it, as an application's {@code rdma_cm} exchange precedes its queue pairs' traffic.
 */
class UcxSelectedProviderTckTest extends SelectedProviderTck {
    @Override
    protected TckFixture createFixture() {
        TckFixture fx = super.createFixture();
        if (fx instanceof NamedProviderFixture named && named.hostA() instanceof UcxProvider a && named.hostB() instanceof UcxProvider b
            && a.cm() == UcxProvider.Cm.TCP) {
            try {
                UcxRemoteFixture.introduce(named, a, b);
            } catch (RuntimeException | AssertionError e) {
                named.close();
                throw e;
            }
        }
        return fx;
    }
}
