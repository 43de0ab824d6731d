/**
 * Credit-based flow control as pure state machines (seed 001 &sect;3.1, &sect;4.4): values in, values out.
 *
 * <p><b>Internal:</b> not API. Everything under {@code io.rdmaflux.core.internal} may change in any
 * release; the documented API is {@code io.rdmaflux.core}, the Channel SPI in
 * {@code io.rdmaflux.core.channel}, {@code .reorder}, {@code .stripe}, {@code .engine} and the wire
 * format in {@code .frame}.
 */
@NullMarked
package io.rdmaflux.core.internal.credit;

import org.jspecify.annotations.NullMarked;
