/**
 * The rail-striping policies plugged into reactive-core connections through its
 * {@link io.rdmaflux.core.channel.ChannelFactory} SPI:
 * {@code ConnectionSpec.rails(2).striping(Rails.adaptive())}.
 */
@NullMarked
package io.rdmaflux.striping.connection;

import org.jspecify.annotations.NullMarked;
