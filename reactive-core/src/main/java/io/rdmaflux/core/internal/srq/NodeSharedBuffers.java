package io.rdmaflux.core.internal.srq;

import io.rdmaflux.core.internal.buffer.SharedSlotRegion;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import org.jspecify.annotations.Nullable;

/**
 * A node's shared buffers, one {@link RailSharedBuffers} per rail (port), created on the first connection
 * that uses the rail: per rail one SRQ-backed receive pool of {@code receiveBuffers} and one send region of
 * {@code sendBuffers}, registered once for all the node's RC connections (seed 003 &sect;2.1).
 *
 * <p><b>Concurrency:</b> thread-safe. <b>Lifecycle:</b> {@link #close()} (by the node, after every
 * connection's QPs are destroyed) frees them all.
 */
public final class NodeSharedBuffers implements AutoCloseable {
    private final String name;
    private final int bufferBytes;
    private final int receiveBuffers;
    private final int controlReserve;
    private final int sendBuffers;
    private final int creditWindow;
    private final @Nullable RailSharedBuffers[] rails;
    private boolean closed;

    /**
     * @param receiveBuffers receive buffers per rail, &gt; controlReserve
     * @param controlReserve of them kept for control frames, &ge; 1
     * @param sendBuffers    send buffers per rail, &ge; 1
     * @throws IllegalArgumentException naming the value and the builder option to fix it
     */
    public NodeSharedBuffers(String name, int rails, int bufferBytes, int receiveBuffers, int controlReserve,
                             int sendBuffers, int creditWindow) {
        this.creditWindow = creditWindow;
        if (receiveBuffers <= controlReserve || controlReserve < 1) {
            throw new IllegalArgumentException("shared receive buffers > " + controlReserve + " (the control reserve) required but it was "
                + receiveBuffers + "; raise RdmaNode.Builder.sharedReceiveQueue(..)");
        }
        if (sendBuffers < 2) {
            throw new IllegalArgumentException("shared send buffers >= 2 required but it was " + sendBuffers
                + "; raise RdmaNode.Builder.sharedSendBuffers(..)");
        }
        this.name = name;
        this.bufferBytes = bufferBytes;
        this.receiveBuffers = receiveBuffers;
        this.controlReserve = controlReserve;
        this.sendBuffers = sendBuffers;
        this.rails = new RailSharedBuffers[rails];
    }

    /**
     * The shared buffers of rail {@code rail} (port {@code port}), created on first use, registered in
     * {@code pd} (the protection domain of the port's device).
     *
     * @throws IllegalStateException if closed
     */
    public synchronized RailSharedBuffers rail(int rail, Port port, ProtectionDomain pd) {
        if (closed) {
            throw new IllegalStateException("node " + name + " is closed");
        }
        RailSharedBuffers r = rails[rail];
        if (r == null) {
            SharedReceivePool receive = new SharedReceivePool(name + " srq rail " + rail + " (port " + port.number() + ")", pd, bufferBytes,
                receiveBuffers, controlReserve, creditWindow);
            try {
                r = new RailSharedBuffers(receive, new SharedSlotRegion(name + " shared send rail " + rail, pd, bufferBytes, sendBuffers,
                    Access.LOCAL_WRITE));
            } catch (RuntimeException e) {
                receive.close();
                throw e;
            }
            rails[rail] = r;
        }
        return r;
    }

    /** The rail's buffers if created, else null. */
    public synchronized @Nullable RailSharedBuffers existing(int rail) {
        return rails[rail];
    }

    /** Registered bytes of the shared pools created so far (receive and send, every rail). */
    public synchronized long registeredBytes() {
        long b = 0;
        for (RailSharedBuffers r : rails) {
            if (r != null) {
                b += r.receive().region().registeredBytes() + r.send().registeredBytes();
            }
        }
        return b;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (RailSharedBuffers r : rails) {
            if (r != null) {
                r.receive().close();
                r.send().close();
            }
        }
    }
}
