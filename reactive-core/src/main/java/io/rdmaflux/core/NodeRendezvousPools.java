package io.rdmaflux.core;

import io.rdmaflux.core.internal.buffer.MessageBufferPool;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.ProtectionDomain;
import org.jspecify.annotations.Nullable;

import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A node's two pools of registered whole-message buffers for the rendezvous: the receive pool that peers RDMA
 * WRITE large messages into, and the send pool that large messages are staged in before their WRITEs (or that
 * the receiver RDMA-reads them from). Each holds {@code rendezvousBuffers} buffers of {@code maxMessageBytes},
 * registered on every device of the node (each rail writes, reads and grants with its device's keys) on first
 * use and shared by every connection, so pinned memory stays bounded per node.
 *
 * <p><b>Concurrency:</b> thread-safe; a pool is created once, under a lock, and read without one afterwards.
 * <b>Lifecycle:</b> no pool is created once the node is closed; {@link #close()} frees those created.
 */
final class NodeRendezvousPools implements AutoCloseable {
    private final String nodeName;
    private final List<ProtectionDomain> pds;
    private final int maxMessageBytes;
    private final int rendezvousBuffers;
    private final BooleanSupplier nodeClosed;
    private final Object lock = new Object();
    private volatile @Nullable MessageBufferPool receivePool;
    private volatile @Nullable MessageBufferPool sendPool;

    NodeRendezvousPools(String nodeName, List<ProtectionDomain> pds, int maxMessageBytes, int rendezvousBuffers,
                        BooleanSupplier nodeClosed) {
        this.nodeName = nodeName;
        this.pds = pds;
        this.maxMessageBytes = maxMessageBytes;
        this.rendezvousBuffers = rendezvousBuffers;
        this.nodeClosed = nodeClosed;
    }

    /**
     * The receive pool ({@code receive} true) or the send pool, registered now if this is its first use.
     *
     * @throws IllegalStateException naming the node if it is closed and the pool was not created before
     */
    MessageBufferPool get(boolean receive) {
        MessageBufferPool p = receive ? receivePool : sendPool;
        if (p != null) {
            return p;
        }
        synchronized (lock) {
            p = receive ? receivePool : sendPool;
            if (p == null) {
                if (nodeClosed.getAsBoolean()) {
                    throw new IllegalStateException("node " + nodeName + " is closed");
                }
                p = new MessageBufferPool(nodeName + (receive ? " rendezvous receive" : " rendezvous send"), pds, Math.max(1, maxMessageBytes),
                    // the send side may be RDMA-read by the receiver (the READ rendezvous)
                    rendezvousBuffers, receive ? Access.LOCAL_WRITE | Access.REMOTE_WRITE : Access.LOCAL_WRITE | Access.REMOTE_READ);
                if (receive) {
                    receivePool = p;
                } else {
                    sendPool = p;
                }
            }
            return p;
        }
    }

    /** Frees the pools created; called by the node's close once no connection uses them. */
    @Override
    public void close() {
        synchronized (lock) {
            MessageBufferPool p = receivePool;
            if (p != null) {
                p.close();
            }
            p = sendPool;
            if (p != null) {
                p.close();
            }
        }
    }
}
