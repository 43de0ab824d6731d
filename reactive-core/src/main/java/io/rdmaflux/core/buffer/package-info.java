/** Registered buffer pools sliced into fixed-size slots. */
@NullMarked
package io.rdmaflux.core.buffer;

import org.jspecify.annotations.NullMarked;
