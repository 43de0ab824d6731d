/** The progress engine: agents with {@code int doWork(long nowNs)} run in DEDICATED, SHARED or INVOKER mode. */
@NullMarked
package io.rdmaflux.core.engine;

import org.jspecify.annotations.NullMarked;
