/**
 * The {@code disni} verbs provider: RC verbs on RDMA NICs through DiSNI. This build holds its
 * availability probe and selection; see {@link io.rdmaflux.verbs.disni.DisniProviderFactory}.
 */
@NullMarked
package io.rdmaflux.verbs.disni;

import org.jspecify.annotations.NullMarked;
