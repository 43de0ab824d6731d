package io.rdmaflux.verbs.ucx;

import io.rdmaflux.core.tck.SelectedProviderConnectionTck;

/**
 * The Connection TCK over {@code -Drdmaflux.provider=NAME} with {@code ucx} on the class path:
 * {@code mvn -B -pl verbs-ucx -am test -Drdmaflux.provider=ucx -Drdmaflux.provider.options=tls=tcp,cm=tcp,cm-host=127.0.0.1,threading=invoker
 * -Dtest=UcxSelectedProviderConnectionTckTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class UcxSelectedProviderConnectionTckTest extends SelectedProviderConnectionTck {
}
