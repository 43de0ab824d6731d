/** PSN/ESN reordering (seed 000 &sect;5.2, seed 001 &sect;4.5), also as the standalone operator {@link io.rdmaflux.core.reorder.Reorder#byPsn}. */
@NullMarked
package io.rdmaflux.core.reorder;

import org.jspecify.annotations.NullMarked;
