package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import org.jspecify.annotations.Nullable;

import java.util.ArrayList;
import java.util.List;

/**
 * Connection stage: the end of a connection's resources. After it terminated, its channels (queue pairs,
 * completion queues, send and receive buffers) are freed once no receive buffer is held and no frame is
 * in flight; the node's rendezvous buffers it held go back to the node's pools only then, when no WRITE
 * can still touch them. The node lists the connection until every rendezvous and reassembled message it
 * delivered was released too, so that node metrics and node close account for them.
 *
 * <p><b>Concurrency:</b> {@link #onDeliveredMessageGone()} on any thread; the rest on the progress
 * thread, or on the closing thread after the node's progress thread stopped.
 */
final class ConnectionResources {
    private final DefaultRdmaConnection connection;
    private final RdmaNode node;
    private final Channel[] channels;
    private volatile boolean freed;

    ConnectionResources(DefaultRdmaConnection connection, RdmaNode node, Channel[] channels) {
        this.connection = connection;
        this.node = node;
        this.channels = channels;
    }

    boolean isFreed() {
        return freed;
    }

    /** After termination, on each duty cycle: frees the channels once nothing of theirs is held or in flight. */
    void maybeFree() {
        connection.receiveBuffers().drainReleased();
        // rendezvous and reassembled messages hold nothing of the rails (a node pool slot, their own
        // buffer): they do not keep the QPs, CQs and rail buffers; see onDeliveredMessageGone
        if (!freed && connection.receiveBuffers().held() == 0) {
            for (Channel ch : channels) {
                if (!ch.settled() && !ch.isFailed()) {
                    return;
                }
            }
            free();
        }
    }

    /** Destroys the channels and returns the node's buffers; once (also called by node close). */
    void free() {
        if (freed) {
            return;
        }
        freed = true;
        connection.advance(ConnectionState.FREED);
        for (Channel ch : channels) {
            ch.close();
        }
        // only now, with the QPs destroyed, can no WRITE of this connection still read a staging slot or
        // land in a message buffer: the node's pools may hand them to another connection
        connection.rendezvousSender().free();
        connection.rendezvousReceiver().free();
        node.onConnectionRailsFreed(connection);
        onDeliveredMessageGone();
    }

    /**
     * Called after the rails were freed and after each rendezvous or reassembled message's last release,
     * on any thread: both sides write first ({@link #freed}, the counters) and read the other after, all
     * volatile, so at least one of them sees everything released; the node's removal is idempotent.
     */
    void onDeliveredMessageGone() {
        if (freed && connection.rendezvousReceiver().outstanding() == 0 && connection.assembler().outstanding() == 0) {
            node.onConnectionFreed(connection);
        }
    }

    /**
     * Received messages whose reference count is above 0 after termination: by reference count, not by
     * the buffers outstanding, so a release still on its way to the progress thread is not a leak.
     */
    RdmaLeakReporter.@Nullable Leak heldByApplication() {
        List<String> examples = new ArrayList<>(RdmaLeakReporter.Leak.MAX_EXAMPLES);
        int held = connection.receiveBuffers().heldByApplication(examples);
        held += connection.rendezvousReceiver().heldByApplication(examples);
        // reassembled messages are not kept anywhere once handed out: counted only
        held += connection.assembler().outstanding();
        return held == 0 ? null : new RdmaLeakReporter.Leak(connection.name(), held, examples);
    }
}
