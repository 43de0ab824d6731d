/**
 * RSocket over rdmaflux: {@link io.rdmaflux.rsocket.RdmaClientTransport} and
 * {@link io.rdmaflux.rsocket.RdmaServerTransport} carry RSocket frames over an
 * {@code io.rdmaflux.core.RdmaConnection}, one frame per message, with RSocket's {@code request(n)} on
 * each stream and rdmaflux's receive-buffer credits on the connection.
 */
@NullMarked
package io.rdmaflux.rsocket;

import org.jspecify.annotations.NullMarked;
