package io.rdmaflux.core.channel;

import io.rdmaflux.core.RdmaException;
import org.agrona.DirectBuffer;

/**
 * What an {@link RcSubchannel} reports to its owner (the connection), on the progress thread.
 */
public interface SubchannelListener {
    /**
     * A DATA frame arrived in receive buffer {@code slot}. The listener owns the buffer until it calls
     * {@link RcSubchannel#releaseReceiveBuffer(int)} exactly once.
     *
     * @param buffer        memory holding the payload at {@code payloadOffset}
     * @param messageLength bytes of the whole message the fragment belongs to
     */
    void onData(RcSubchannel subchannel, int slot, DirectBuffer buffer, int payloadOffset, int payloadLength, int psn,
                boolean first, boolean last, int messageLength);

    /**
     * A packed DATA frame arrived in receive buffer {@code slot}: {@code count} whole messages with PSNs
     * {@code firstPsn ...}, each a length prefix ({@link io.rdmaflux.core.frame.DataFrameCodec#packedLength})
     * and its bytes from {@code payloadOffset}, already validated to fill the payload exactly. The
     * listener owns the buffer until it calls {@link RcSubchannel#releaseReceiveBuffer(int)} exactly
     * once (when the last of the messages is released).
     */
    void onPackedData(RcSubchannel subchannel, int slot, DirectBuffer buffer, int payloadOffset, int firstPsn, int count);

    /**
     * An RTS arrived: the peer asks to RDMA WRITE message {@code psn} of {@code messageLength} bytes
     * (it used a buffer credit, already returned, and a message credit).
     */
    void onRts(RcSubchannel subchannel, int psn, int messageLength);

    /** A CTS arrived: message {@code psn} may be written to {@code [remoteAddress, +messageLength)} with {@code rkey}. */
    void onCts(RcSubchannel subchannel, int psn, int messageLength, long remoteAddress, int rkey, int flags);

    /** A FIN arrived: the stripe {@code [stripeOffset, +stripeLength)} of message {@code psn}, one of {@code stripes}, is in place. */
    void onFin(RcSubchannel subchannel, int psn, int stripeOffset, int stripeLength, int stripes, int stripeIndex);

    /** A DATA or RTS frame, or an RDMA WRITE, posted with {@code token} completed successfully. */
    void onSendCompleted(RcSubchannel subchannel, long token);

    /**
     * The peer sent CLOSE: it sends no more messages after PSN {@code nextPsn - 1}.
     *
     * @param last     whether it is the peer's last frame on this rail (a FINAL or an abort)
     * @param railMask the rails the peer sends this CLOSE on (bit r for rail r), 0 for every rail
     */
    void onPeerClose(RcSubchannel subchannel, boolean abort, boolean last, int nextPsn, String reason, int railMask);

    /**
     * The peer closed its inbound side (a CREDIT frame with
     * {@link io.rdmaflux.core.frame.FrameHeader#FLAG_INBOUND_CLOSED}): it takes no more messages; its
     * subscriber got exactly the messages before PSN {@code firstUndeliveredPsn}. May come once per rail.
     */
    void onPeerInboundClosed(RcSubchannel subchannel, int firstUndeliveredPsn);

    /** The peer reports that rail {@code failedRail} failed on its side (a RAIL_DOWN frame). */
    void onPeerRailDown(RcSubchannel subchannel, int failedRail);

    /** The subchannel failed (error completion, protocol violation); it is in ERROR and sends nothing more. */
    void onFailure(RcSubchannel subchannel, RdmaException error);
}
