/**
 * Shared receive queues (seed 003 &sect;1.1, &sect;2.1): one SRQ-backed pool of receive buffers per node
 * and rail that every RC connection draws from, the fair credit budget over it, and each channel's
 * share of it.
 *
 * <p><b>Internal:</b> not API (see {@code io.rdmaflux.core.internal.credit}).
 */
@NullMarked
package io.rdmaflux.core.internal.srq;

import org.jspecify.annotations.NullMarked;
