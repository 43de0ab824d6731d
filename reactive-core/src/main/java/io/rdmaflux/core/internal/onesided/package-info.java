/**
 * The one-sided engine of a connection (seed 002): exposed and remote regions, load balanced
 * fragmentation over rails with separate put and get queues, access and exposure epochs. Internal: the
 * public face is {@link io.rdmaflux.core.onesided.OneSided}.
 */
@NullMarked
package io.rdmaflux.core.internal.onesided;

import org.jspecify.annotations.NullMarked;
