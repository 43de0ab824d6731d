/**
 * Registered buffer pools sliced into fixed-size slots.
 *
 * <p><b>Internal:</b> not API (see {@code io.rdmaflux.core.internal.credit}).
 */
@NullMarked
package io.rdmaflux.core.internal.buffer;

import org.jspecify.annotations.NullMarked;
