package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.tck.SelectedProviderTck;

/**
 * {@link SelectedProviderTck} with {@code ucx} (and {@code soft}) on the class path:
 * {@code mvn -B -pl verbs-ucx -am test -Drdmaflux.provider=ucx -Drdmaflux.provider.options=tls=tcp,threading=invoker
 * -Dtest=UcxSelectedProviderTckTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class UcxSelectedProviderTckTest extends SelectedProviderTck {
}
