package io.rdmaflux.core.channel;

import io.rdmaflux.core.RdmaException;
import org.agrona.DirectBuffer;

/**
 * The events a {@link Channel} reports to the connection that owns it: the channel-to-connection half
 * of the Channel SPI (the commands of {@link Channel} are the other half). Every event carries values
 * (PSNs, lengths, addresses, credit totals); neither side holds the other's mutable state.
 *
 * <p><b>Credits</b> cross as values in both directions: {@link #takeMessageCreditTotal()} is asked
 * for the connection's running total of message credits granted each time the channel encodes a
 * frame header (the piggyback of seed 001 &sect;3.1), and {@link #onMessageCreditTotal} hands over
 * the peer's total carried by every frame that arrived. Buffer credits are the channel's own.
 *
 * <p>The events of the data path are abstract, so a channel that decorates another (the eager ring
 * over RC send/receive) cannot forget to forward one: a listener that forgot the READ rendezvous's
 * events would drop a large message silently. Only the hooks meant for decorators
 * ({@link #onChannelControl}, {@link #onWriteCompleted}) have defaults.
 *
 * <p><b>Concurrency:</b> every method is called on the progress thread that drives the channel
 * ({@link Channel#doWork}), never concurrently.
 */
public interface ChannelEvents {
    /**
     * The connection's message-credit word for a frame being encoded now: it moves the credits
     * pending to the wire and returns the running total granted, modulo 2^15
     * ({@link io.rdmaflux.core.internal.credit.MessageCredits#takeWireTotal()}).
     */
    int takeMessageCreditTotal();

    /**
     * A frame arrived carrying the peer's running total of message credits granted, modulo 2^15; called
     * for every frame, before the frame's own event.
     */
    void onMessageCreditTotal(int total15);

    /**
     * A DATA frame arrived in receive buffer {@code slot}. The listener owns the buffer until it calls
     * {@link Channel#releaseReceiveBuffer(int)} exactly once.
     *
     * @param buffer        memory holding the payload at {@code payloadOffset}
     * @param messageLength bytes of the whole message the fragment belongs to
     */
    void onData(Channel channel, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn,
                boolean first, boolean last, int messageLength);

    /**
     * A packed DATA frame arrived in receive buffer {@code slot}: {@code count} whole messages with PSNs
     * {@code firstPsn ...}, each a length prefix ({@link io.rdmaflux.core.frame.DataFrameCodec#packedLength})
     * and its bytes from {@code payloadOffset}, already validated to fill the payload exactly. The
     * listener owns the buffer until it calls {@link Channel#releaseReceiveBuffer(int)} exactly
     * once (when the last of the messages is released).
     */
    void onPackedData(Channel channel, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count);

    /**
     * An RTS arrived: the peer asks to RDMA WRITE message {@code psn} of {@code messageLength} bytes
     * (it used a buffer credit, already returned, and a message credit).
     */
    void onRts(Channel channel, int psn, int messageLength);

    /** A CTS arrived: message {@code psn} may be written to {@code [remoteAddress, +messageLength)} with {@code rkey}. */
    void onCts(Channel channel, int psn, int messageLength, long remoteAddress, int rkey, int flags);

    /**
     * A CTS with one rkey per rail arrived (rails over several devices): rail {@code r}'s stripe is written
     * with {@code railRkeys[r]}. The default hands rail 0's rkey to {@link #onCts(Channel, int, int, long, int, int)}:
     * a listener that relays events to another must override it.
     */
    default void onCts(Channel channel, int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        onCts(channel, psn, messageLength, remoteAddress, railRkeys[0], flags);
    }

    /** A FIN arrived: the stripe {@code [stripeOffset, +stripeLength)} of message {@code psn}, one of {@code stripes}, is in place. */
    void onFin(Channel channel, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex);

    /**
     * An RTS_READ arrived: the peer asks this side to RDMA READ message {@code psn} of
     * {@code messageLength} bytes from {@code [address, +messageLength)} with {@code rkey} (it used a
     * buffer credit, already returned, and a message credit). Channels without the READ rendezvous never
     * call it.
     */
    void onRtsRead(Channel channel, int psn, int messageLength, long address, int rkey);

    /** A READ_FIN arrived: the peer read message {@code psn} (or dropped it, {@code flags} DISCARD). */
    void onReadFin(Channel channel, int psn, int messageLength, int flags);

    /** An RDMA READ posted with {@code token} ({@link Channel#readStripe}) completed successfully: its bytes are here. */
    void onReadCompleted(Channel channel, long token);

    /** A DATA or RTS frame, or an RDMA WRITE, posted with {@code token} completed successfully. */
    void onSendCompleted(Channel channel, long token);

    /**
     * The peer sent CLOSE: it sends no more messages after PSN {@code nextPsn - 1}.
     *
     * @param last     whether it is the peer's last frame on this rail (a FINAL or an abort)
     * @param railMask the rails the peer sends this CLOSE on (bit r for rail r), 0 for every rail
     */
    void onPeerClose(Channel channel, boolean abort, boolean last, int nextPsn, String reason, int railMask);

    /**
     * The peer closed its inbound side (a CREDIT frame with
     * {@link io.rdmaflux.core.frame.FrameHeader#FLAG_INBOUND_CLOSED}): it takes no more messages; its
     * subscriber got exactly the messages before PSN {@code firstUndeliveredPsn}. May come once per rail.
     */
    void onPeerInboundClosed(Channel channel, int firstUndeliveredPsn);

    /** The peer reports that rail {@code failedRail} failed on its side (a RAIL_DOWN frame). */
    void onPeerRailDown(Channel channel, int failedRail);

    /**
     * A {@link io.rdmaflux.core.frame.FrameType#CHANNEL_CONTROL} frame arrived: {@code length} bytes of a
     * control message of the channel kind at {@code offset} of {@code buffer}, valid during the call only.
     * Meant for a kind built over another channel (its decorator's events intercept it); the connection
     * itself ignores it.
     */
    default void onChannelControl(Channel channel, DirectBuffer buffer, int offset, int length) {
    }

    /**
     * A bare RDMA WRITE posted with {@link Channel#postWrite} and {@code tag} completed successfully (its
     * source memory may be reused). A kind built over another channel intercepts its own WRITEs' tags; the
     * connection hands the rest to its one-sided engine.
     */
    default void onWriteCompleted(Channel channel, int tag) {
    }

    /**
     * A one-sided control frame arrived ({@link io.rdmaflux.core.frame.FrameType#REGION_EXPOSE},
     * {@code REGION_REVOKE}, {@code EPOCH_SYNC} or {@code EPOCH_ACK}), its payload already validated by its
     * codec: the frame starts at {@code frameOffset} of {@code buffer}, valid during the call only. The
     * default ignores it (a listener without one-sided support).
     */
    default void onOneSidedControl(Channel channel, io.rdmaflux.core.frame.FrameType type, DirectBuffer buffer, int frameOffset) {
    }

    /**
     * The receive subscriber's outstanding demand, in messages ({@link Long#MAX_VALUE} for unbounded):
     * a channel whose receive buffers are lent from a pool shared with other connections (an SRQ) asks
     * the pool for buffers by it, so a connection nobody reads from holds none. Progress thread. The
     * default, unbounded, suits channels with buffers of their own.
     */
    default long receiveDemand() {
        return Long.MAX_VALUE;
    }

    /** The subchannel failed (error completion, protocol violation); it is in ERROR and sends nothing more. */
    void onFailure(Channel channel, RdmaException error);
}
