package io.rdmaflux.core.channel;

import io.rdmaflux.verbs.Port;

/**
 * One subchannel of a connection: an RC queue pair on one rail (port) with its own receive
 * buffers and credits (seed 000 &sect;4.2, the virtual subchannel abstraction). A connection of
 * {@code ConnectionSpec.rails(n)} has {@code n} subchannels, in rail order; a
 * {@link SubchannelScheduler} chooses which one carries each message.
 *
 * <p>This view is read-only: what a scheduling policy needs to decide and to learn. Every message
 * carries its connection-wide PSN in the frame header, and the receiving connection restores PSN
 * order across subchannels with its ESN and out-of-order queue (seed 000 &sect;5.2), so a policy is
 * free to put consecutive messages on different rails.
 *
 * <p><b>Concurrency:</b> read on the progress thread only.
 */
public interface Subchannel {
    /** The rail index in the connection, from 0. */
    int rail();

    /** The local port this subchannel sends from. */
    Port port();

    /** DATA frames the peer will accept now (its credits held by this side). */
    long sendCredits();

    /** Send buffers free for new DATA frames now. */
    int freeSendBuffers();

    /** Whether a DATA frame could be posted now (a credit and a send buffer). */
    default boolean canSend() {
        return sendCredits() > 0 && freeSendBuffers() > 0;
    }

    /**
     * Whether this subchannel may carry messages or stripes at all (not failed, not closing). A
     * usable subchannel may still have to wait for credit or a send buffer ({@link #canSend()}).
     */
    default boolean isUsable() {
        return true;
    }

    /** Payload bytes one DATA frame carries; larger messages take one frame (and credit) per fragment. */
    int maxFramePayloadBytes();

    /** DATA frames posted and not yet completed. */
    int framesInFlight();

    /** Bytes of payload sent on this subchannel since it was created. */
    long bytesSent();

    /**
     * Messages whose last DATA frame (or packed frame) was posted on this subchannel. Rendezvous messages,
     * written by RDMA WRITE stripes after an RTS, are not counted here; their bytes are in
     * {@link #bytesSent()}.
     */
    long messagesCompleted();

    /**
     * What identifies this rail of this connection: the same object for the live subchannel a
     * {@link ChannelFactory} is given and for every {@link SubchannelSnapshot} of it that
     * {@code RdmaConnection.subchannels()} returns, so a factory can find its scheduler of a connection.
     */
    default Object identity() {
        return this;
    }
}
