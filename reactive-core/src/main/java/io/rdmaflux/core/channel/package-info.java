/**
 * The Channel SPI: {@link io.rdmaflux.core.channel.Channel} (commands), {@link io.rdmaflux.core.channel.ChannelEvents}
 * (events, credits as values), {@link io.rdmaflux.core.channel.ChannelKind} and
 * {@link io.rdmaflux.core.channel.ChannelProvider} (where a new kind plugs in), the one codec of work-request
 * ids ({@link io.rdmaflux.core.channel.WorkRequestTokens}); and the scheduling SPI a striping layer plugs
 * into ({@link io.rdmaflux.core.channel.SubchannelScheduler}, {@link io.rdmaflux.core.channel.ChannelFactory},
 * the read-only {@link io.rdmaflux.core.channel.Subchannel} view and its immutable snapshot).
 */
@NullMarked
package io.rdmaflux.core.channel;

import org.jspecify.annotations.NullMarked;
