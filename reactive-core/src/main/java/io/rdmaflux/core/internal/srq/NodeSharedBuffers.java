package io.rdmaflux.core.internal.srq;

import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.internal.buffer.SharedSlotRegion;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import org.jspecify.annotations.Nullable;

/**
 * A node's shared buffers, one {@link RailSharedBuffers} per rail (port), created on the first connection
 * that uses the rail: per rail one SRQ-backed receive pool of {@code receiveBuffers} and one send region of
 * {@code sendBuffers}, registered once for all the node's RC connections (seed 003 &sect;2.1); and per rail one
 * receive pool of the same size for the connections of each other kind that takes its buffers from them
 * ({@link SharedPoolChannelProvider}: reliable UD), sharing the rail's send region.
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
    /** Per rail: the send region every kind's channels share (created with the rail's first pool). */
    private final @Nullable SharedSlotRegion[] sendRegions;
    /** Per kind other than RC send/receive ({@link SharedPoolChannelProvider}): its receive pools by rail. */
    private final java.util.Map<ChannelKind, @Nullable RailSharedBuffers[]> otherKinds = new java.util.EnumMap<>(ChannelKind.class);
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
        this.sendRegions = new SharedSlotRegion[rails];
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
            SharedSlotRegion send = sendRegion(rail, pd);
            r = new RailSharedBuffers(new SharedReceivePool(name + " srq rail " + rail + " (port " + port.number() + ")", pd, bufferBytes,
                receiveBuffers, controlReserve, creditWindow), send);
            rails[rail] = r;
        }
        return r;
    }

    /**
     * The shared buffers of rail {@code rail} for the channels of {@code kind}'s provider, created on first use: a
     * receive pool of its own (as many buffers as the RC one, its queue made by the provider, the same credit rule
     * among the kind's connections) and the rail's send region, which every kind shares.
     *
     * @throws IllegalStateException if closed
     */
    public synchronized RailSharedBuffers rail(int rail, Port port, ProtectionDomain pd, SharedPoolChannelProvider kind) {
        if (closed) {
            throw new IllegalStateException("node " + name + " is closed");
        }
        RailSharedBuffers[] ofKind = otherKinds.computeIfAbsent(kind.kind(), k -> new RailSharedBuffers[rails.length]);
        RailSharedBuffers r = ofKind[rail];
        if (r == null) {
            SharedSlotRegion send = sendRegion(rail, pd);
            r = new RailSharedBuffers(new SharedReceivePool(name + " " + kind.kind() + " srq rail " + rail + " (port " + port.number() + ")",
                pd, bufferBytes, receiveBuffers, controlReserve, creditWindow, n -> kind.createSharedReceiveQueue(pd, n)), send);
            ofKind[rail] = r;
        }
        return r;
    }

    private SharedSlotRegion sendRegion(int rail, ProtectionDomain pd) {
        SharedSlotRegion s = sendRegions[rail];
        if (s == null) {
            s = new SharedSlotRegion(name + " shared send rail " + rail, pd, bufferBytes, sendBuffers, Access.LOCAL_WRITE);
            sendRegions[rail] = s;
        }
        return s;
    }

    /** The rail's buffers if created, else null. */
    public synchronized @Nullable RailSharedBuffers existing(int rail) {
        return rails[rail];
    }

    /** Registered bytes of the shared pools created so far (receive and send, every rail and kind). */
    public synchronized long registeredBytes() {
        long b = 0;
        for (SharedReceivePool p : receivePools()) {
            b += p.region().registeredBytes();
        }
        for (SharedSlotRegion s : sendRegions) {
            if (s != null) {
                b += s.registeredBytes();
            }
        }
        return b;
    }

    private java.util.List<SharedReceivePool> receivePools() {
        java.util.List<SharedReceivePool> all = new java.util.ArrayList<>();
        for (RailSharedBuffers r : rails) {
            if (r != null) {
                all.add(r.receive());
            }
        }
        for (RailSharedBuffers[] ofKind : otherKinds.values()) {
            for (RailSharedBuffers r : ofKind) {
                if (r != null) {
                    all.add(r.receive());
                }
            }
        }
        return all;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (SharedReceivePool p : receivePools()) {
            p.close();
        }
        for (SharedSlotRegion s : sendRegions) {
            if (s != null) {
                s.close();
            }
        }
    }
}
