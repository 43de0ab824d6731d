package io.rdmaflux.ud;

import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SharedReceiveQueue;
import io.rdmaflux.verbs.VerbsException;
import org.jspecify.annotations.Nullable;

import java.util.ArrayDeque;

/**
 * The shared receive queue of a node's reliable UD channels on one rail: the receives of the node's shared pool
 * for {@link io.rdmaflux.core.channel.ChannelKind#RELIABLE_UD} ({@code RdmaNode.Builder.sharedReceiveQueue(..)}),
 * consumed in posting order by every {@link ReliableDatagramQp} created with it. A datagram queue pair's receives
 * are software (DR copies a message's VFRAGs into a posted receive, or reassembles it on the heap first), so it cannot consume the
 * device's SRQ; this one is taken from by {@link #take()} when a SEND of a peer is placed, and a message that finds
 * it empty waits in DR (its credit holds the peer back) until a buffer is posted again.
 *
 * <p><b>Concurrency:</b> thread-safe: buffers are reposted by whichever connection releases them, taken by the
 * progress thread of the queue pair placing a message.
 */
final class DatagramSharedReceiveQueue implements SharedReceiveQueue {
    private final int maxWorkRequests;
    private final ArrayDeque<PostedReceive> posted;
    private boolean closed;

    /** @throws VerbsException naming the value if {@code maxWorkRequests < 1} */
    DatagramSharedReceiveQueue(int maxWorkRequests) {
        if (maxWorkRequests < 1) {
            throw new VerbsException("a shared receive queue of at least 1 work request required but it was " + maxWorkRequests);
        }
        this.maxWorkRequests = maxWorkRequests;
        this.posted = new ArrayDeque<>(Math.min(maxWorkRequests, 1 << 16));
    }

    @Override
    public int maxWorkRequests() {
        return maxWorkRequests;
    }

    @Override
    public synchronized int outstanding() {
        return posted.size();
    }

    @Override
    public synchronized boolean postReceive(ReceiveWorkRequest wr) {
        if (closed) {
            throw new VerbsException("shared receive queue is closed; create a new one");
        }
        if (posted.size() >= maxWorkRequests) {
            return false;
        }
        posted.add(PostedReceive.of(wr));
        return true;
    }

    /** The oldest posted receive, now the caller's, or null if none is posted (or the queue is closed). */
    synchronized @Nullable PostedReceive take() {
        return closed ? null : posted.poll();
    }

    /**
     * Returns a receive {@link #take()} gave that was not completed (its message was abandoned, or its queue pair
     * closed) to the head of the queue; dropped if the queue is closed.
     */
    synchronized void giveBack(PostedReceive r) {
        if (!closed) {
            posted.addFirst(r);
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        posted.clear();
    }

    @Override
    public synchronized String toString() {
        return "DatagramSharedReceiveQueue{posted=" + posted.size() + "/" + maxWorkRequests + (closed ? ", closed" : "") + "}";
    }
}
