/**
 * The {@code disni} verbs provider: RC verbs on RDMA NICs through DiSNI ({@code rdma_cm} for
 * connections, stateful verb calls for work requests and completions), over an internal seam
 * ({@code RdmaSeam}) that the tests implement on the soft provider. Entry point:
 * {@link io.rdmaflux.verbs.disni.DisniProviderFactory}; see the module README for what has been tested
 * how (the DiSNI binding itself has not run on RDMA hardware).
 */
@NullMarked
package io.rdmaflux.verbs.disni;

import org.jspecify.annotations.NullMarked;
