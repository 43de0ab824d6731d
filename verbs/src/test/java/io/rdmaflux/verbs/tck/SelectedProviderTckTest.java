package io.rdmaflux.verbs.tck;

/** {@link SelectedProviderTck} with this module's providers ({@code soft}) on the class path. */
class SelectedProviderTckTest extends SelectedProviderTck {
}
