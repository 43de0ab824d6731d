package io.rdmaflux.core.internal.srq;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelProvider;
import io.rdmaflux.core.channel.ChannelSetup;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.SharedReceiveQueue;
import io.rdmaflux.verbs.VerbsException;

/**
 * A {@link ChannelProvider} whose channels can take their receive and send buffers from the node's shared pools
 * ({@code RdmaNode.Builder.sharedReceiveQueue(..)}) instead of registering pools of their own, like the RC
 * send/receive channel's SRQ mode. The node keeps, per such kind and rail, one {@link SharedReceivePool} whose
 * queue this provider makes ({@link #createSharedReceiveQueue}: a kind whose queue pairs are not the device's
 * cannot consume the device's SRQ), lent by the same {@link SrqCreditBudget} rule; the rail's send region is the
 * one the RC channels share.
 *
 * <p><b>Internal:</b> not API; a kind in another module of this project implements it. <b>Concurrency:</b> as
 * {@link ChannelProvider}: thread-safe.
 */
public interface SharedPoolChannelProvider extends ChannelProvider {
    /**
     * Makes the shared receive queue of this kind's pool on one rail; the pool's buffers are registered in {@code pd}.
     *
     * @param pd              the rail's protection domain
     * @param maxWorkRequests receives it must hold at once (every buffer of the pool)
     * @throws VerbsException if it cannot be made
     */
    SharedReceiveQueue createSharedReceiveQueue(ProtectionDomain pd, int maxWorkRequests);

    /**
     * Opens one rail's channel over the rail's shared buffers of this kind: it registers no buffers of its own.
     *
     * @throws VerbsException if the device refuses a resource (nothing is left allocated)
     */
    Channel open(ChannelSetup setup, RailSharedBuffers shared);
}
