package io.rdmaflux.core.channel;

import io.rdmaflux.verbs.Port;

/**
 * An immutable picture of one rail of a connection, taken by {@code RdmaConnection.subchannels()}:
 * safe to keep and read on any thread, unlike the live {@link Channel} the progress thread owns. The
 * values are read without synchronizing with the progress thread, so each may lag it by a duty cycle;
 * take a new snapshot to see a newer state.
 *
 * @param rail                 rail index in the connection, from 0
 * @param port                 the local port the rail sends from
 * @param kind                 the rail's channel kind
 * @param state                the rail's state when the snapshot was taken
 * @param sendCredits          DATA frames the peer would accept (buffer credits held)
 * @param freeSendBuffers      send slots free for new DATA frames
 * @param maxFramePayloadBytes payload bytes one DATA frame carries, bytes
 * @param framesInFlight       DATA frames posted and not completed
 * @param bytesSent            payload bytes sent on the rail since the connection opened, bytes
 * @param messagesCompleted    messages whose last DATA frame went on the rail (rendezvous messages not counted)
 * @param identity             the live rail's {@link Subchannel#identity()}
 */
public record SubchannelSnapshot(int rail, Port port, ChannelKind kind, State state, long sendCredits, int freeSendBuffers,
                                 int maxFramePayloadBytes, int framesInFlight, long bytesSent, long messagesCompleted,
                                 Object identity) implements Subchannel {
    /** A rail's state as a snapshot sees it. */
    public enum State {
        /** Carries messages. */
        USABLE,
        /** Closing: its CLOSE went; control frames still go. */
        CLOSING,
        /** Its last frame went, or it was closed. */
        CLOSED,
        /** It failed (error completion, port down, reported by the peer). */
        FAILED
    }

    /** The snapshot of {@code ch} now. */
    public static SubchannelSnapshot of(Channel ch) {
        State state = ch.isFailed() ? State.FAILED
            : ch.isClosed() || ch.finalSent() ? State.CLOSED
            : ch.closeSent() ? State.CLOSING
            : State.USABLE;
        return new SubchannelSnapshot(ch.rail(), ch.port(), ch.kind(), state, ch.sendCredits(), ch.freeSendBuffers(),
            ch.maxFramePayloadBytes(), ch.framesInFlight(), ch.bytesSent(), ch.messagesCompleted(), ch.identity());
    }

    @Override
    public boolean isUsable() {
        return state == State.USABLE;
    }
}
