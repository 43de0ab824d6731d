package io.rdmaflux.core;

import io.rdmaflux.core.channel.SubchannelSnapshot;

import java.util.List;

/**
 * Told when a node's connections open and when they are freed, for tools that aggregate over a
 * node's connections (the Micrometer binder keeps counters that outlive closed connections with it).
 * Register with {@link RdmaNode#addConnectionListener}.
 *
 * <p><b>Concurrency:</b> the callbacks run on whichever thread opened or freed the connection (the
 * connecting thread, the connection manager's, the progress thread, or the thread of a message's final
 * release), possibly concurrently for different connections: keep them short, thread-safe and
 * non-blocking. <b>Errors:</b> a callback that throws does not disturb the node or the other
 * listeners; its error goes to Reactor's {@code Hooks.onErrorDropped}.
 */
public interface ConnectionListener {
    /** {@code connection} was established (connected or accepted) and is registered with the node. */
    default void connectionOpened(RdmaConnection connection) {
    }

    /**
     * {@code connection} was closed and freed (or freed by the node's close): its counters will not change
     * any more. Called once per connection opened while the listener was registered, or present when it
     * was registered.
     *
     * @param metrics     the connection's final counters
     * @param subchannels its rails' final snapshots, in rail order
     */
    default void connectionFreed(RdmaConnection connection, ConnectionMetrics metrics, List<SubchannelSnapshot> subchannels) {
    }
}
