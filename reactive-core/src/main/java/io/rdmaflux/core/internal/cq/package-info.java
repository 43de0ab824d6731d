/**
 * One completion queue per device shared by a node's queue pairs, completions dispatched by queue pair
 * number (seed 000 &sect;5.1).
 *
 * <p><b>Internal:</b> not API (see {@code io.rdmaflux.core.internal.credit}).
 */
@NullMarked
package io.rdmaflux.core.internal.cq;

import org.jspecify.annotations.NullMarked;
