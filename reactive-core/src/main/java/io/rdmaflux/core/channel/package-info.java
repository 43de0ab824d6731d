/** Channels: the RC send/receive channel and the subchannel SPI a striping layer plugs into. */
@NullMarked
package io.rdmaflux.core.channel;

import org.jspecify.annotations.NullMarked;
