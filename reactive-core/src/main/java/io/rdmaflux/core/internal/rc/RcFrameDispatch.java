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
 * The receive side of an {@link RcSubchannel}: decodes a frame that arrived in a receive buffer (its
 * header already validated) and hands it to the connection as a typed {@link ChannelEvents} event, or
 * fails the channel naming what was wrong. DATA and RTS frames use a buffer credit; control frames
 * are reposted at once.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RcFrameDispatch {
    private final RcSubchannel ch;
    private final UnsafeBuffer memory;

    RcFrameDispatch(RcSubchannel ch, UnsafeBuffer memory) {
        this.ch = ch;
        this.memory = memory;
    }

    /** The frame of {@code type} at {@code off} of receive buffer {@code slot}; {@code l} null: nobody listens yet. */
    void dispatch(int slot, int off, FrameType type, @Nullable ChannelEvents l) {
        switch (type) {
            case DATA -> {
                if (!ch.onDataArrived()) {
                    ch.dropReceiveBuffer(slot);
                    ch.fail(new RdmaProtocolException("peer sent a DATA frame (PSN " + FrameHeader.psn(memory, off)
                        + ") on rail " + ch.rail() + " without holding a credit"));
                    return;
                }
                if (l == null) {
                    ch.releaseReceiveBuffer(slot);
                    return;
                }
                if (DataFrameCodec.isPacked(memory, off)) {
                    try {
                        DataFrameCodec.validatePacked(memory, off);
                    } catch (FrameFormatException e) {
                        ch.releaseReceiveBuffer(slot);
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
                if (!ch.onDataArrived()) {
                    ch.dropReceiveBuffer(slot);
                    ch.fail(new RdmaProtocolException("peer sent an RTS frame (PSN " + FrameHeader.psn(memory, off)
                        + ") on rail " + ch.rail() + " without holding a credit"));
                    return;
                }
                try {
                    RtsFrameCodec.validatePayload(memory, off);
                } catch (FrameFormatException e) {
                    ch.releaseReceiveBuffer(slot);
                    ch.fail(e);
                    return;
                }
                int psn = FrameHeader.psn(memory, off);
                int length = RtsFrameCodec.messageLength(memory, off);
                // the RTS is parsed: its buffer is free again at once (its credit returns with the next grant)
                ch.releaseReceiveBuffer(slot);
                if (l != null) {
                    l.onRts(ch, psn, length);
                }
            }
            case RTS_READ -> {
                if (!ch.onDataArrived()) {
                    ch.dropReceiveBuffer(slot);
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
                ch.releaseReceiveBuffer(slot);
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
                ch.repost(slot);
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
                ch.repost(slot);
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
                ch.repost(slot);
                if (l != null) {
                    l.onFin(ch, psn, stripeOffset, stripeLength, stripes, index);
                }
            }
            case RAIL_DOWN -> {
                int failedRail = RailDownFrameCodec.rail(memory, off);
                ch.repost(slot);
                if (l != null) {
                    l.onPeerRailDown(ch, failedRail);
                }
            }
            case CREDIT -> {
                boolean inboundClosed = CreditFrameCodec.isInboundClosed(memory, off);
                int firstUndelivered = FrameHeader.psn(memory, off);
                ch.repost(slot);
                if (inboundClosed && l != null) {
                    l.onPeerInboundClosed(ch, firstUndelivered);
                }
            }
            case CHANNEL_CONTROL -> {
                try {
                    ChannelControlFrameCodec.validatePayload(memory, off);
                } catch (FrameFormatException e) {
                    ch.dropReceiveBuffer(slot);
                    ch.fail(e);
                    return;
                }
                if (l != null) {
                    // the payload is read during the call; the buffer is posted again right after
                    l.onChannelControl(ch, memory, ChannelControlFrameCodec.payloadOffset(off), FrameHeader.payloadLength(memory, off));
                }
                ch.repost(slot);
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
                    ch.dropReceiveBuffer(slot);
                    ch.fail(e);
                    return;
                }
                if (l != null) {
                    // read during the call; the buffer is posted again right after
                    l.onOneSidedControl(ch, type, memory, off);
                }
                ch.repost(slot);
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
                    ch.dropReceiveBuffer(slot);
                    ch.fail(e);
                    return;
                }
                ch.repost(slot);
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
            ch.dropReceiveBuffer(slot);
            ch.fail(e);
            return false;
        }
    }
}
