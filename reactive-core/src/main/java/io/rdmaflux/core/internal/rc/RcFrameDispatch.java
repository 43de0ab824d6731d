package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.RdmaProtocolException;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.frame.ChannelControlFrameCodec;
import io.rdmaflux.core.frame.CloseFrameCodec;
import io.rdmaflux.core.frame.CreditFrameCodec;
import io.rdmaflux.core.frame.CtsFrameCodec;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.frame.EpochAckFrameCodec;
import io.rdmaflux.core.frame.EpochSyncFrameCodec;
import io.rdmaflux.core.frame.FinFrameCodec;
import io.rdmaflux.core.frame.FrameFormatException;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.RailDownFrameCodec;
import io.rdmaflux.core.frame.RegionExposeFrameCodec;
import io.rdmaflux.core.frame.RegionRevokeFrameCodec;
import io.rdmaflux.core.frame.ReadFinFrameCodec;
import io.rdmaflux.core.frame.RtsFrameCodec;
import io.rdmaflux.core.frame.RtsReadFrameCodec;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The receive side of an {@link RcSubchannel}: validates the header of a frame that arrived in a receive
 * buffer, takes the credits piggybacked on it (seed 001 &sect;3.1), decodes it and hands it to the
 * connection as a typed {@link ChannelEvents} event, or fails the channel naming what was wrong. DATA
 * and RTS frames use a buffer credit; control frames are reposted at once.
 *
 * <p>Owns the counters of frames received by type.
 *
 * <p><b>Concurrency:</b> progress thread only; {@link #framesReceived} may be read, slightly stale, on any.
 */
final class RcFrameDispatch {
    private final RcSubchannel ch;
    private final RcReceiveBuffers buffers;
    private final RcMessageSender sender;
    private final UnsafeBuffer memory;
    /** Frames received, by {@link FrameType#code()}: plain counters of the progress thread. */
    private final long[] framesReceivedByType = new long[FrameType.MAX_CODE + 1];

    RcFrameDispatch(RcSubchannel ch, RcReceiveBuffers buffers, RcMessageSender sender) {
        this.ch = ch;
        this.buffers = buffers;
        this.sender = sender;
        this.memory = buffers.memory();
    }

    /** Frames of {@code type} that arrived and passed the header checks. */
    long framesReceived(FrameType type) {
        return framesReceivedByType[type.code()];
    }

    /**
     * A frame of {@code byteLength} bytes arrived in receive buffer {@code slot}: checks its header (a
     * bad one fails the channel), marks the channel established, adds the buffer credits and hands on
     * the message-credit total it carries, then dispatches it; {@code l} null: nobody listens yet.
     */
    void onFrame(int slot, int byteLength, @Nullable ChannelEvents l) {
        int off = buffers.offset(slot);
        FrameType type;
        try {
            type = FrameHeader.validate(memory, off, byteLength);
        } catch (FrameFormatException e) {
            buffers.drop(slot);
            ch.fail(e);
            return;
        }
        ch.markEstablished();
        framesReceivedByType[type.code()]++;
        sender.addCredits(FrameHeader.bufferCredits(memory, off));
        if (l != null) {
            l.onMessageCreditTotal(FrameHeader.messageCredits(memory, off));
        }
        dispatch(slot, off, type, l);
    }

    /** The frame of {@code type} at {@code off} of receive buffer {@code slot}; {@code l} null: nobody listens yet. */
    private void dispatch(int slot, int off, FrameType type, @Nullable ChannelEvents l) {
        switch (type) {
            case DATA -> {
                if (!buffers.onDataArrived()) {
                    buffers.drop(slot);
                    ch.fail(new RdmaProtocolException("peer sent a DATA frame (PSN " + FrameHeader.psn(memory, off)
                        + ") on rail " + ch.rail() + " without holding a credit"));
                    return;
                }
                if (l == null) {
                    buffers.release(slot);
                    return;
                }
                if (DataFrameCodec.isPacked(memory, off)) {
                    try {
                        DataFrameCodec.validatePacked(memory, off);
                    } catch (FrameFormatException e) {
                        buffers.release(slot);
                        ch.fail(e);
                        return;
                    }
                    l.onPackedData(ch, slot, memory, DataFrameCodec.payloadOffset(off), FrameHeader.psn(memory, off),
                        FrameHeader.messageLength(memory, off));
                    return;
                }
                l.onData(ch, slot, memory, DataFrameCodec.payloadOffset(off), FrameHeader.payloadLength(memory, off),
                    FrameHeader.psn(memory, off), DataFrameCodec.isFirst(memory, off), DataFrameCodec.isLast(memory, off),
                    FrameHeader.messageLength(memory, off));
            }
            case RTS -> {
                if (!buffers.onDataArrived()) {
                    buffers.drop(slot);
                    ch.fail(new RdmaProtocolException("peer sent an RTS frame (PSN " + FrameHeader.psn(memory, off)
                        + ") on rail " + ch.rail() + " without holding a credit"));
                    return;
                }
                try {
                    RtsFrameCodec.validatePayload(memory, off);
                } catch (FrameFormatException e) {
                    buffers.release(slot);
                    ch.fail(e);
                    return;
                }
                int psn = FrameHeader.psn(memory, off);
                int length = RtsFrameCodec.messageLength(memory, off);
                // the RTS is parsed: its buffer is free again at once (its credit returns with the next grant)
                buffers.release(slot);
                if (l != null) {
                    l.onRts(ch, psn, length);
                }
            }
            case RTS_READ -> {
                if (!buffers.onDataArrived()) {
                    buffers.drop(slot);
                    ch.fail(new RdmaProtocolException("peer sent an RTS_READ frame (PSN " + FrameHeader.psn(memory, off)
                        + ") on rail " + ch.rail() + " without holding a credit"));
                    return;
                }
                if (!validRendezvous(slot, off, type)) {
                    return;
                }
                int psn = FrameHeader.psn(memory, off);
                int length = FrameHeader.messageLength(memory, off);
                long address = RtsReadFrameCodec.address(memory, off);
                int rkey = RtsReadFrameCodec.rkey(memory, off);
                // parsed: its buffer is free again at once (its credit returns with the next grant)
                buffers.release(slot);
                if (l != null) {
                    l.onRtsRead(ch, psn, length, address, rkey);
                }
            }
            case READ_FIN -> {
                if (!validRendezvous(slot, off, type)) {
                    return;
                }
                int psn = FrameHeader.psn(memory, off);
                int length = FrameHeader.messageLength(memory, off);
                int flags = ReadFinFrameCodec.flags(memory, off);
                buffers.repost(slot);
                if (l != null) {
                    l.onReadFin(ch, psn, length, flags);
                }
            }
            case CTS -> {
                if (!validRendezvous(slot, off, type)) {
                    return;
                }
                int psn = FrameHeader.psn(memory, off);
                int length = FrameHeader.messageLength(memory, off);
                long address = CtsFrameCodec.remoteAddress(memory, off);
                int rkey = CtsFrameCodec.rkey(memory, off);
                int flags = CtsFrameCodec.flags(memory, off);
                int rails = CtsFrameCodec.railRkeyCount(memory, off);
                int[] railRkeys = null;
                if (rails > 0) {
                    // rails over several devices: one rkey each (only then is an array made)
                    railRkeys = new int[rails];
                    for (int r = 0; r < rails; r++) {
                        railRkeys[r] = CtsFrameCodec.rkey(memory, off, r);
                    }
                }
                buffers.repost(slot);
                if (l != null) {
                    if (railRkeys != null) {
                        l.onCts(ch, psn, length, address, railRkeys, flags);
                    } else {
                        l.onCts(ch, psn, length, address, rkey, flags);
                    }
                }
            }
            case FIN -> {
                if (!validRendezvous(slot, off, type)) {
                    return;
                }
                int psn = FrameHeader.psn(memory, off);
                int stripeOffset = FinFrameCodec.stripeOffset(memory, off);
                int stripeLength = FinFrameCodec.stripeLength(memory, off);
                int stripes = FinFrameCodec.stripes(memory, off);
                int index = FinFrameCodec.stripeIndex(memory, off);
                buffers.repost(slot);
                if (l != null) {
                    l.onFin(ch, psn, stripeOffset, stripeLength, stripes, index);
                }
            }
            case RAIL_DOWN -> {
                int failedRail = RailDownFrameCodec.rail(memory, off);
                buffers.repost(slot);
                if (l != null) {
                    l.onPeerRailDown(ch, failedRail);
                }
            }
            case CREDIT -> {
                boolean inboundClosed = CreditFrameCodec.isInboundClosed(memory, off);
                int firstUndelivered = FrameHeader.psn(memory, off);
                buffers.repost(slot);
                if (inboundClosed && l != null) {
                    l.onPeerInboundClosed(ch, firstUndelivered);
                }
            }
            case CHANNEL_CONTROL -> {
                try {
                    ChannelControlFrameCodec.validatePayload(memory, off);
                } catch (FrameFormatException e) {
                    buffers.drop(slot);
                    ch.fail(e);
                    return;
                }
                if (l != null) {
                    // the payload is read during the call; the buffer is posted again right after
                    l.onChannelControl(ch, memory, ChannelControlFrameCodec.payloadOffset(off), FrameHeader.payloadLength(memory, off));
                }
                buffers.repost(slot);
            }
            case REGION_EXPOSE, REGION_REVOKE, EPOCH_SYNC, EPOCH_ACK -> {
                try {
                    switch (type) {
                        case REGION_EXPOSE -> RegionExposeFrameCodec.validatePayload(memory, off);
                        case REGION_REVOKE -> RegionRevokeFrameCodec.validatePayload(memory, off);
                        case EPOCH_SYNC -> EpochSyncFrameCodec.validatePayload(memory, off);
                        default -> EpochAckFrameCodec.validatePayload(memory, off);
                    }
                } catch (FrameFormatException e) {
                    buffers.drop(slot);
                    ch.fail(e);
                    return;
                }
                if (l != null) {
                    // read during the call; the buffer is posted again right after
                    l.onOneSidedControl(ch, type, memory, off);
                }
                buffers.repost(slot);
            }
            case CLOSE -> {
                boolean abort = CloseFrameCodec.isAbort(memory, off);
                boolean last = CloseFrameCodec.isFinal(memory, off);
                int nextPsn = FrameHeader.psn(memory, off);
                int railMask = CloseFrameCodec.railMask(memory, off);
                String reason;
                try {
                    reason = CloseFrameCodec.reason(memory, off);
                } catch (FrameFormatException e) {
                    buffers.drop(slot);
                    ch.fail(e);
                    return;
                }
                buffers.repost(slot);
                if (l != null) {
                    l.onPeerClose(ch, abort, last, nextPsn, reason, railMask);
                }
            }
        }
    }

    private boolean validRendezvous(int slot, int off, FrameType type) {
        try {
            switch (type) {
                case CTS -> CtsFrameCodec.validatePayload(memory, off);
                case RTS_READ -> RtsReadFrameCodec.validatePayload(memory, off);
                case READ_FIN -> ReadFinFrameCodec.validatePayload(memory, off);
                default -> FinFrameCodec.validatePayload(memory, off);
            }
            return true;
        } catch (FrameFormatException e) {
            buffers.drop(slot);
            ch.fail(e);
            return false;
        }
    }
}
