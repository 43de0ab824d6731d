package io.rdmaflux.core.internal.srq;

import io.rdmaflux.core.internal.buffer.SharedSlotRegion;

/**
 * What the channels of one node's rail (RC, or another kind's: {@link SharedPoolChannelProvider}) share instead of
 * pools of their own: the SRQ-backed receive pool and the region their send buffers are drawn from ({@link io.rdmaflux.core.internal.buffer.SlotPool#share}).
 *
 * @param receive the rail's shared receive pool
 * @param send    the rail's shared send region
 */
public record RailSharedBuffers(SharedReceivePool receive, SharedSlotRegion send) {
}
