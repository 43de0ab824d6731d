package io.rdmaflux.core.tck;

/** {@link SelectedProviderConnectionTck} with this module's providers ({@code soft}) on the class path. */
class SelectedProviderConnectionTckTest extends SelectedProviderConnectionTck {
}
