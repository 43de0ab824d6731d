package io.rdmaflux.core;

import io.rdmaflux.core.internal.cq.SharedCompletionQueue;
import io.rdmaflux.core.internal.rc.RcSubchannel;
import io.rdmaflux.core.internal.srq.NodeSharedBuffers;
import org.jspecify.annotations.Nullable;

/**
 * The queues a node's connections share instead of owning their own, each optional: per rail one shared receive
 * queue with its receive pool and one shared send region ({@link NodeSharedBuffers}, seed 003 &sect;2.1; only when
 * {@link RdmaNode.Builder#sharedReceiveQueue(int)} is on and every device has SRQs), and per device one completion
 * queue for the RC queue pairs of every connection and rail ({@link SharedCompletionQueue}, seed 000 &sect;5.1; when
 * {@link RdmaNode.Builder#sharedCompletionQueue(int)} is on), which the node's progress engine polls.
 *
 * <p><b>Concurrency:</b> immutable references, read from any thread; the pools and CQs are thread-safe themselves.
 * <b>Lifecycle:</b> {@link #close()} by the node's close, once every connection's QPs are gone.
 */
final class NodeSharedQueues implements AutoCloseable {
    /** The SRQ-backed receive pools and shared send regions of the rails (null: per-connection pools). */
    private final @Nullable NodeSharedBuffers buffers;
    /** Per device one CQ for its QPs of every connection and rail (null: one CQ per channel). */
    private final SharedCompletionQueue @Nullable [] cqs;

    private NodeSharedQueues(@Nullable NodeSharedBuffers buffers, SharedCompletionQueue @Nullable [] cqs) {
        this.buffers = buffers;
        this.cqs = cqs;
    }

    /**
     * Creates what {@code settings} ask for on {@code rails}' devices.
     *
     * @throws IllegalArgumentException if a device's largest CQ cannot hold {@code sharedCompletionQueue} queue pairs
     */
    static NodeSharedQueues open(NodeSettings settings, NodeRails rails) {
        // seed 003 2.1: one receive pool per rail for every connection, where the device has SRQs
        NodeSharedBuffers buffers = settings.sharedReceiveBuffers > 0
            && rails.devices().stream().allMatch(d -> d.capabilities().sharedReceiveQueue())
            ? new NodeSharedBuffers(settings.name, rails.railCount(), settings.bufferBytes, settings.sharedReceiveBuffers,
                Math.max(settings.controlBuffers, settings.sharedReceiveBuffers / 16), settings.sharedSendBuffers, settings.sharedCreditWindow)
            : null;
        // seed 000 5.1: one CQ per device, polled in turn by the progress engine, sized from the QPs it serves
        SharedCompletionQueue[] cqs = settings.sharedCqQueuePairs <= 0 ? null : SharedCompletionQueue.perDevice(settings.name,
            rails.devices(), settings.sharedCqQueuePairs, RcSubchannel.entriesPerQp(settings.receiveBuffers,
                settings.controlBuffers + 2 * settings.rendezvousBuffers, settings.sendBuffers, settings.rendezvousBuffers));
        return new NodeSharedQueues(buffers, cqs);
    }

    @Nullable NodeSharedBuffers buffers() {
        return buffers;
    }

    /** The shared CQs, one per device in the node's device order, or null. */
    SharedCompletionQueue @Nullable [] completionQueues() {
        return cqs;
    }

    /** Device {@code device}'s shared CQ (index into the node's devices), or null. */
    @Nullable SharedCompletionQueue completionQueue(int device) {
        return cqs == null ? null : cqs[device];
    }

    /** Registered bytes of the shared receive and send pools so far (0 without them). */
    long registeredBytes() {
        return buffers == null ? 0 : buffers.registeredBytes();
    }

    @Override
    public void close() {
        if (buffers != null) {
            // every connection's QPs are gone: nothing consumes the SRQs or reads the send regions
            buffers.close();
        }
        if (cqs != null) {
            for (SharedCompletionQueue cq : cqs) {
                cq.close();
            }
        }
    }
}
