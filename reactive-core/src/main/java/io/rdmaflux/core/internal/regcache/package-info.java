/**
 * The node's pin-down registration cache (seed 001 &sect;3.1, seed 000 &sect;5.1, seed 002 &sect;3.2):
 * application memory sent by reference is registered once and kept registered, within a byte budget,
 * instead of being copied into a staging buffer per message.
 *
 * <p><b>Internal:</b> not API (see {@code io.rdmaflux.core.internal.credit}).
 */
@NullMarked
package io.rdmaflux.core.internal.regcache;

import org.jspecify.annotations.NullMarked;
