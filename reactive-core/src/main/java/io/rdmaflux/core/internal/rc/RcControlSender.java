package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.ChannelControlFrameCodec;
import io.rdmaflux.core.frame.CloseFrameCodec;
import io.rdmaflux.core.frame.ControlFrameEncoder;
import io.rdmaflux.core.frame.CreditFrameCodec;
import io.rdmaflux.core.frame.CtsFrameCodec;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.RailDownFrameCodec;
import io.rdmaflux.core.frame.ReadFinFrameCodec;
import io.rdmaflux.core.internal.buffer.SlotPool;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The control frames of an {@link RcSubchannel} and this rail's side of the close handshake. Control
 * frames (CREDIT, CTS, READ_FIN, RAIL_DOWN, CLOSE, CHANNEL_CONTROL, the one-sided control frames) take
 * no credit, may use the send buffer kept back for them, and are posted signalled at once; they go
 * until this rail's last frame went. CTS and READ_FIN are the receiver's half of the rendezvous
 * (seed 001 &sect;3).
 *
 * <p>Owns the handshake's state: whether the CLOSE went (after it no message goes, control frames may
 * follow) and whether the last frame went (a FINAL or abort CLOSE: nothing more goes on this rail). A
 * send method that finds no send buffer returns false and the caller retries later; nothing here
 * allocates on the per-message path.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RcControlSender {
    private static final long NO_TOKEN = WorkRequestTokens.NONE;

    private final RcSubchannel ch;
    private final SlotPool sendPool;
    private final UnsafeBuffer sendMemory;
    private final RcSendQueue sendQueue;
    /** CLOSE went: no more credit-taking frames (messages); control frames may follow until {@link #finalSent}. */
    private boolean closeSent;
    /** The last frame went (a FINAL or abort CLOSE): nothing more is sent on this rail. */
    private boolean finalSent;
    private int closeRailMask;

    RcControlSender(RcSubchannel ch, SlotPool sendPool, RcSendQueue sendQueue) {
        this.ch = ch;
        this.sendPool = sendPool;
        this.sendMemory = sendPool.memory();
        this.sendQueue = sendQueue;
    }

    boolean closeSent() {
        return closeSent;
    }

    boolean finalSent() {
        return finalSent;
    }

    /** Whether a control frame can go now: established, not failed, the last frame not sent, and a send buffer free. */
    private boolean canSend() {
        return ch.isEstablished() && !ch.isFailed() && !finalSent && sendPool.available() > 0;
    }

    /**
     * Posts a CTS frame (reply rendezvous): the peer may RDMA WRITE its message {@code psn} into
     * {@code [remoteAddress, remoteAddress + messageLength)} with {@code rkey}. A control frame: no
     * credit; it may use the send buffer kept back for control frames.
     *
     * @return false if no send buffer is free now (retry later) or the subchannel cannot send
     */
    boolean sendCts(int psn, int messageLength, long remoteAddress, int rkey, int flags) {
        if (!canSend()) {
            return false;
        }
        int slot = sendPool.acquire();
        int len = CtsFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, ch.takeCreditWord(), messageLength,
            remoteAddress, rkey, flags);
        sendQueue.post(slot, len, NO_TOKEN, FrameType.CTS);
        return !ch.isFailed();
    }

    /**
     * Posts a CTS frame carrying one rkey per rail (rails over several devices, {@link CtsFrameCodec}); the
     * one-rkey frame when they are all the same.
     *
     * @return false if no send buffer is free now (retry later) or the subchannel cannot send
     * @throws IllegalStateException if the frame does not fit a send buffer (naming the sizes and the fix)
     */
    boolean sendCts(int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        if (!canSend()) {
            return false;
        }
        if (CtsFrameCodec.length(railRkeys.length) > sendPool.slotBytes()) {
            throw new IllegalStateException("a CTS with " + railRkeys.length + " rail rkeys takes " + CtsFrameCodec.length(railRkeys.length)
                + " bytes but a send buffer has " + sendPool.slotBytes() + "; raise RdmaNode.Builder.bufferBytes(..)");
        }
        int slot = sendPool.acquire();
        int len = CtsFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, ch.takeCreditWord(), messageLength,
            remoteAddress, railRkeys, flags);
        sendQueue.post(slot, len, NO_TOKEN, FrameType.CTS);
        return !ch.isFailed();
    }

    /**
     * Posts a READ_FIN (control frame, no credit): this side's READs of message {@code psn} completed.
     *
     * @return false if no send buffer is free now (retry later) or the subchannel cannot send
     */
    boolean sendReadFin(int psn, int messageLength, int flags) {
        if (!canSend()) {
            return false;
        }
        int slot = sendPool.acquire();
        int len = ReadFinFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, ch.takeCreditWord(), messageLength, flags);
        sendQueue.post(slot, len, NO_TOKEN, FrameType.READ_FIN);
        return !ch.isFailed();
    }

    /**
     * Tells the peer that rail {@code failedRail} failed here (a control frame, no credit).
     *
     * @return false if no send buffer is free now (retry later) or this subchannel cannot send
     */
    boolean sendRailDown(int failedRail) {
        if (!canSend()) {
            return false;
        }
        int slot = sendPool.acquire();
        sendQueue.post(slot, RailDownFrameCodec.encode(sendMemory, sendPool.offset(slot), ch.takeCreditWord(), failedRail), NO_TOKEN,
            FrameType.RAIL_DOWN);
        return !ch.isFailed();
    }

    /** See {@link RcSubchannel#sendOneSidedControl}. */
    boolean sendOneSidedControl(FrameType type, ControlFrameEncoder encoder) {
        if (!canSend()) {
            return false;
        }
        int slot = sendPool.acquire();
        int len = encoder.encode(sendMemory, sendPool.offset(slot), ch.takeCreditWord());
        sendQueue.post(slot, len, NO_TOKEN, type);
        return !ch.isFailed();
    }

    /** See {@link RcSubchannel#sendChannelControl}; {@code length} was checked. */
    boolean sendChannelControl(DirectBuffer src, int offset, int length) {
        if (!canSend()) {
            return false;
        }
        int slot = sendPool.acquire();
        int len = ChannelControlFrameCodec.encode(sendMemory, sendPool.offset(slot), ch.takeCreditWord(), src, offset, length);
        sendQueue.post(slot, len, NO_TOKEN, FrameType.CHANNEL_CONTROL);
        return !ch.isFailed();
    }

    /**
     * Tells the peer this side closed its inbound side: a CREDIT frame with
     * {@link FrameHeader#FLAG_INBOUND_CLOSED} naming the first PSN the subscriber did not get.
     *
     * @return false if no send buffer is free now (retry later) or this rail cannot send
     */
    boolean sendInboundClosed(int firstUndeliveredPsn) {
        if (!canSend()) {
            return false;
        }
        int slot = sendPool.acquire();
        sendQueue.post(slot, CreditFrameCodec.encodeInboundClosed(sendMemory, sendPool.offset(slot), ch.takeCreditWord(), firstUndeliveredPsn),
            NO_TOKEN, FrameType.CREDIT);
        return !ch.isFailed();
    }

    /**
     * Sends a CREDIT frame now if this subchannel can (carrying the connection's pending message
     * credits with this rail's buffer credits).
     *
     * @return whether one was sent
     */
    boolean sendCreditFrame() {
        if (canSend()) {
            sendControl(FrameType.CREDIT, false, false, 0, "");
            return true;
        }
        return false;
    }

    /** A CREDIT frame if {@code due} and one can go now; @return whether one was sent. */
    boolean sendCreditFrameIf(boolean due) {
        if (due && canSend()) {
            sendControl(FrameType.CREDIT, false, false, 0, "");
            return true;
        }
        return false;
    }

    /** The connecting side's first frame, a CREDIT: @return whether it was posted (false: failed, or no send buffer now). */
    boolean sendFirstFrame() {
        return sendControl(FrameType.CREDIT, false, false, 0, "");
    }

    /**
     * Sends an abort CLOSE, best effort (no retry: the connection terminates right after), unless this
     * rail's last frame went already; even after a graceful CLOSE. Nothing is sent on this rail after it.
     */
    void sendAbort(int nextPsn, String reason) {
        if (finalSent || ch.isFailed()) {
            return;
        }
        if (ch.isEstablished()) {
            closeRailMask = 0;
            sendControl(FrameType.CLOSE, true, false, nextPsn, reason);
        }
        closeSent = true;
        finalSent = true;
    }

    /**
     * Sends a graceful CLOSE naming the rails ({@code railMask}, 0 for all) the connection sends it on, so
     * the peer does not wait for one on a rail that failed. Without {@code last} it ends the messages:
     * control frames may still follow. With {@code last} ({@link FrameHeader#FLAG_FINAL}) it is this
     * rail's last frame, sent once the peer's CLOSE arrived: as the CLOSE itself, or as a second CLOSE.
     *
     * @return true if the frame went or nothing is left to send; false if no send buffer is free now
     *         (call again later)
     */
    boolean sendGracefulClose(int nextPsn, int railMask, boolean last) {
        if (ch.isFailed() || finalSent || (closeSent && !last)) {
            return true;
        }
        if (ch.isEstablished()) {
            if (sendPool.available() == 0) {
                return false;
            }
            closeRailMask = railMask;
            sendControl(FrameType.CLOSE, false, last, nextPsn, "");
        }
        closeSent = true;
        finalSent = last;
        return true;
    }

    /** @return whether it was posted (false: failed, or no send buffer now) */
    private boolean sendControl(FrameType type, boolean abort, boolean last, int nextPsn, String reason) {
        if (ch.isFailed()) {
            return false;
        }
        int slot = sendPool.acquire();
        if (slot < 0) {
            return false;
        }
        int off = sendPool.offset(slot);
        int max = ch.maxFramePayloadBytes();
        int len = type == FrameType.CREDIT
            ? CreditFrameCodec.encode(sendMemory, off, 0, ch.takeCreditWord())
            : CloseFrameCodec.encode(sendMemory, off, 0, nextPsn, ch.takeCreditWord(), abort, last,
                reason.length() > max ? reason.substring(0, max) : reason, closeRailMask);
        sendQueue.post(slot, len, NO_TOKEN, type);
        return true;
    }
}
