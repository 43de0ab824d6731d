package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.internal.onesided.OneSidedEngine;
import org.jspecify.annotations.Nullable;

/**
 * Connection stage: the connection's {@link OneSidedEngine}, made on first use (a one-sided call on the
 * connection, or a one-sided control frame from the peer) and ended with the connection. Most of many
 * peers never do put/get, and the engine's queues and tables are some 3 KB per connection. An engine made
 * after the connection ended is ended at once with the connection's error, so its operations fail rather
 * than wait.
 *
 * <p><b>Concurrency:</b> {@link #forUser()}, {@link #engine()} and {@link #current()} on any thread (a
 * volatile read, then a lock while the engine is made); {@link #end} on the progress thread as the
 * connection terminates (or on the closing thread after the node's progress thread stopped). The engine's
 * own work runs on the progress thread, in the connection's duty cycle.
 */
final class LazyOneSidedEngine {
    private final DefaultRdmaConnection connection;
    private final RdmaNode node;
    private final Channel[] channels;
    /** The node device of each rail: one-sided RDMA needs them all on one. */
    private final RailDevices devices;
    private volatile @Nullable OneSidedEngine engine;
    /** The error that ended the connection, for an engine made after it (guarded by {@link #lock}). */
    private @Nullable Throwable end;
    private final Object lock = new Object();

    LazyOneSidedEngine(DefaultRdmaConnection connection, RdmaNode node, Channel[] channels, RailDevices devices) {
        this.connection = connection;
        this.node = node;
        this.channels = channels;
        this.devices = devices;
    }

    /**
     * {@link RdmaConnection#oneSided()}: the engine, made on first use.
     *
     * @throws UnsupportedOperationException when the connection's rails span several devices
     */
    OneSidedEngine forUser() {
        if (devices.spansDevices()) {
            // exposures and local regions are registered on the node's first device only
            throw new UnsupportedOperationException("one-sided RDMA on connection " + connection.name() + " is not supported: its rails span"
                + " several devices; connect with ConnectionSpec.rails(..) naming rails of one device for one-sided RDMA");
        }
        return engine();
    }

    /** The engine if one was made, else null (no one-sided work was asked for, and none is in flight). */
    @Nullable OneSidedEngine current() {
        return engine;
    }

    /** The engine, made on first use; one made after the connection ended is ended too. */
    OneSidedEngine engine() {
        OneSidedEngine os = engine;
        if (os != null) {
            return os;
        }
        synchronized (lock) {
            os = engine;
            if (os == null) {
                os = new OneSidedEngine(connection.name(), channels, node.protectionDomain(), connection::wakeUp,
                    connection.termination()::protocolFailure);
                Throwable ended = end;
                if (ended != null) {
                    // nothing queued in it yet: its ops fail at once with the connection's error
                    os.terminate(ended);
                }
                engine = os;
            }
            return os;
        }
    }

    /** The connection ended with {@code error}: the engine made so far ends with it, and any made later. */
    void end(Throwable error) {
        OneSidedEngine os;
        synchronized (lock) {
            end = error;
            os = engine;
        }
        if (os != null) {
            os.terminate(error);
        }
    }
}
