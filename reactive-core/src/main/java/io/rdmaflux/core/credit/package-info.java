/** Credit-based flow control as pure state machines (seed 001 &sect;3.1, &sect;4.4). */
@NullMarked
package io.rdmaflux.core.credit;

import org.jspecify.annotations.NullMarked;
