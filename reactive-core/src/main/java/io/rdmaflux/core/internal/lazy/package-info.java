/**
 * Lazy connection establishment (seed 003 &sect;3.2): a connection whose queue pairs and handshake are
 * made on first use.
 *
 * <p><b>Internal:</b> not API (see {@code io.rdmaflux.core.internal.credit}).
 */
@NullMarked
package io.rdmaflux.core.internal.lazy;

import org.jspecify.annotations.NullMarked;
