/**
 * The RC send/receive channel ({@code ChannelKind.RC_SEND_RECV}): {@link io.rdmaflux.core.internal.rc.RcSubchannel}
 * and its parts (one concept each: resources, lifecycle, message and control frames, send queue, receive buffers,
 * frame dispatch, completion source), opened through {@code ChannelProvider.rcSendRecv()}.
 *
 * <p><b>Internal:</b> not API (see {@code io.rdmaflux.core.internal.credit}); a connection sees it only
 * through the Channel SPI.
 */
@NullMarked
package io.rdmaflux.core.internal.rc;

import org.jspecify.annotations.NullMarked;
