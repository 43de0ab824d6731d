/**
 * The eager RDMA channel kind ({@link io.rdmaflux.core.channel.ChannelKind#EAGER_RDMA}, seed 001
 * &sect;4.1&ndash;4.6): small frames go as one RDMA WRITE into a ring of slots the receiver polls, over
 * an RC send/receive channel that carries everything else and is the fallback. Entry points:
 * {@link io.rdmaflux.eager.EagerChannelProvider} (found by {@link java.util.ServiceLoader}) and
 * {@link io.rdmaflux.eager.EagerChannel}.
 */
@NullMarked
package io.rdmaflux.eager;

import org.jspecify.annotations.NullMarked;
