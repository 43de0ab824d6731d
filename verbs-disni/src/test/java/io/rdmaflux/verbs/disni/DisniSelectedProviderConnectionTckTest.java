package io.rdmaflux.verbs.disni;

import io.rdmaflux.core.tck.SelectedProviderConnectionTck;

/**
 * The Connection TCK over {@code -Drdmaflux.provider=disni} on a host with a NIC and libdisni (see this
 * module's README); skipped without the property.
 */
class DisniSelectedProviderConnectionTckTest extends SelectedProviderConnectionTck {
}
