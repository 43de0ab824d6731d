package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.tck.SelectedProviderTck;

/**
 * {@link SelectedProviderTck} with {@code disni} (and {@code soft}) on the class path; skipped unless
 * {@code -Drdmaflux.provider=NAME} is given (see this module's README).
 */
class DisniSelectedProviderTckTest extends SelectedProviderTck {
}
