package io.rdmaflux.core.channel;

import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;

/**
 * What a node gives a {@link ChannelProvider} to open one rail's channel: its protection domain, the
 * rail's port and the node's buffer settings.
 *
 * @param rail            rail index in the connection, from 0
 * @param pd              the node's protection domain (registrations and queue pairs go in it)
 * @param port            the local port of the rail
 * @param bufferBytes     size of every send and receive buffer, frame header included, bytes
 * @param receiveBuffers  DATA receive buffers (the most buffer credits the peer can hold)
 * @param controlBuffers  extra receive buffers for control frames (CREDIT, CLOSE, CTS, FIN)
 * @param sendBuffers     send buffers, at least 2 (one stays for control frames)
 * @param creditThreshold pending buffer credits that justify an explicit CREDIT frame, &ge; 1
 * @param timeouts        the queue pair's transport and RNR retry settings
 * @param maxWrites       RDMA WRITEs (rendezvous stripes) that may be outstanding at once, &ge; 0
 * @param eager           the eager ring settings of this rail ({@link ChannelKind#EAGER_RDMA}; other kinds ignore them)
 * @param eagerPollingSet the most peers whose eager rings the node polls at once (seed 001 &sect;4.6), &ge; 0
 */
public record ChannelSetup(int rail, ProtectionDomain pd, Port port, int bufferBytes, int receiveBuffers, int controlBuffers,
                           int sendBuffers, int creditThreshold, QpTimeouts timeouts, int maxWrites, EagerSpec eager,
                           int eagerPollingSet) {
    /** A setup with the default eager settings ({@link EagerSpec#DEFAULTS}, a polling set of 64). */
    public ChannelSetup(int rail, ProtectionDomain pd, Port port, int bufferBytes, int receiveBuffers, int controlBuffers,
                        int sendBuffers, int creditThreshold, QpTimeouts timeouts, int maxWrites) {
        this(rail, pd, port, bufferBytes, receiveBuffers, controlBuffers, sendBuffers, creditThreshold, timeouts, maxWrites,
            EagerSpec.DEFAULTS, 64);
    }
}
