package io.rdmaflux.core.internal.rc;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelEvents;
import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.frame.FinFrameCodec;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.RtsFrameCodec;
import io.rdmaflux.core.frame.RtsReadFrameCodec;
import io.rdmaflux.core.internal.buffer.SlotPool;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The frames of an {@link RcSubchannel} that carry messages, and the send credits they spend
 * (seed 001 &sect;3.1): DATA (a message, a fragment of one, or several packed into one frame),
 * RTS and RTS_READ (rendezvous, seed 001 &sect;3), each taking one buffer credit; and the rendezvous
 * stripe, an RDMA WRITE then its FIN frame (seed 000 &sect;5.3). Encodes them into the send buffers and
 * posts them through the channel's {@link RcSendQueue}, with selective signalling.
 *
 * <p>Owns the send credits the peer granted, the packed frame being filled, and the counters of what
 * was sent (bytes, messages, packed frames). The callers checked that a send buffer and, where the
 * frame takes one, a credit are there; nothing here allocates.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RcMessageSender {
    private final RcSubchannel ch;
    private final SlotPool sendPool;
    private final UnsafeBuffer sendMemory;
    private final RcSendQueue sendQueue;
    /** The packed DATA frame being filled ({@link #openPack}): its send slot (-1 if none), first PSN, write position, count. */
    private int packSlot = -1;
    private int packPsn;
    private int packPosition;
    private int packCount;
    private long sendCredits;
    private long bytesSent;
    private long messagesCompleted;
    private long packedFramesSent;

    RcMessageSender(RcSubchannel ch, SlotPool sendPool, RcSendQueue sendQueue) {
        this.ch = ch;
        this.sendPool = sendPool;
        this.sendMemory = sendPool.memory();
        this.sendQueue = sendQueue;
    }

    long sendCredits() {
        return sendCredits;
    }

    /** Credits granted in the peer's handshake. */
    void initialCredits(long n) {
        sendCredits = n;
    }

    /** Buffer credits the peer granted in the header of a frame that arrived. */
    void addCredits(int n) {
        sendCredits += n;
    }

    long bytesSent() {
        return bytesSent;
    }

    long messagesCompleted() {
        return messagesCompleted;
    }

    long packedFramesSent() {
        return packedFramesSent;
    }

    /**
     * Posts one DATA frame carrying {@code length} bytes of {@code message} from {@code srcOffset};
     * uses one credit. The caller checked {@link RcSubchannel#canSend()}.
     *
     * @param token handed back in {@link ChannelEvents#onSendCompleted}
     */
    void sendData(RdmaMessage message, int srcOffset, int length, boolean first, boolean last, int psn, long token) {
        int slot = sendPool.acquire();
        int off = sendPool.offset(slot);
        int msgLen = message.lengthBytes();
        DataFrameCodec.encodeHeader(sendMemory, off, first, last, 0, psn, ch.takeCreditWord(), length, msgLen);
        if (first && last) {
            message.writeTo(sendMemory, DataFrameCodec.payloadOffset(off));
        } else {
            message.copyTo(srcOffset, sendMemory, DataFrameCodec.payloadOffset(off), length);
        }
        sendCredits--;
        bytesSent += length;
        if (last) {
            messagesCompleted++;
        }
        sendQueue.postBatched(slot, FrameHeader.LENGTH + length, token, FrameType.DATA);
    }

    /**
     * Starts a packed DATA frame whose first message has PSN {@code psn}: takes a send buffer; the
     * caller then {@link #packAppend appends} messages and {@link #closePack closes} it. The caller
     * checked {@link RcSubchannel#canSend()}.
     */
    void openPack(int psn) {
        packSlot = sendPool.acquire();
        sendQueue.clearToken(packSlot);
        packPsn = psn;
        packCount = 0;
        packPosition = DataFrameCodec.payloadOffset(sendPool.offset(packSlot));
    }

    /**
     * Copies {@code message} (the next PSN) into the open packed frame; the caller checked that it fits.
     * The frame holds the bytes until its send completes (or, if this subchannel fails first, until
     * {@link RcSubchannel#forEachUnackedSend} handed them to the connection), so the caller may release the
     * message right after.
     */
    void packAppend(RdmaMessage message) {
        int len = message.lengthBytes();
        int at = DataFrameCodec.putPackedLength(sendMemory, packPosition, len);
        message.writeTo(sendMemory, at);
        packPosition = at + len;
        packCount++;
    }

    /**
     * Posts the open packed frame; uses one buffer credit (its messages used a message credit each).
     *
     * @param token handed back in {@link ChannelEvents#onSendCompleted}
     */
    void closePack(long token) {
        int slot = packSlot;
        packSlot = -1;
        int off = sendPool.offset(slot);
        int payload = packPosition - DataFrameCodec.payloadOffset(off);
        int len = DataFrameCodec.encodePackedHeader(sendMemory, off, 0, packPsn, ch.takeCreditWord(), payload, packCount);
        sendCredits--;
        bytesSent += payload;
        messagesCompleted += packCount;
        packedFramesSent++;
        sendQueue.postBatched(slot, len, token, FrameType.DATA);
    }

    /**
     * Every credit-taking frame this subchannel took a send buffer for and has not seen complete: posted
     * without a completion, held back by selective signaling, or whose post failed. Meant for
     * {@link ChannelEvents#onFailure}, when nothing more completes here: the connection sends again
     * what these frames carried (their bytes stay in the send buffers until {@link RcSubchannel#close()}).
     */
    void forEachUnacked(Channel.UnackedSend visitor) {
        sendQueue.forEachUnacked(visitor, sendMemory, packSlot);
    }

    /**
     * Posts an RTS frame for a message of {@code messageLength} bytes (seed 001 &sect;3: start
     * rendezvous); uses one buffer credit like a DATA frame. The caller checked {@link RcSubchannel#canSend()}.
     *
     * @param token handed back in {@link ChannelEvents#onSendCompleted}
     */
    void sendRts(int psn, int messageLength, long token) {
        int slot = sendPool.acquire();
        int off = sendPool.offset(slot);
        int len = RtsFrameCodec.encode(sendMemory, off, psn, ch.takeCreditWord(), messageLength);
        sendCredits--;
        sendQueue.postBatched(slot, len, token, FrameType.RTS);
    }

    /**
     * Posts an RTS_READ (the READ rendezvous, seed 001 &sect;3): the peer may RDMA READ message {@code psn}
     * from {@code [address, +messageLength)} with {@code rkey}; one buffer credit. The caller checked
     * {@link RcSubchannel#canSend()}.
     */
    void sendRtsRead(int psn, int messageLength, long address, int rkey, long token) {
        int slot = sendPool.acquire();
        int len = RtsReadFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, ch.takeCreditWord(), messageLength, address, rkey);
        sendCredits--;
        sendQueue.postBatched(slot, len, token, FrameType.RTS_READ);
    }

    /**
     * Posts one stripe of a rendezvous message: a signaled RDMA WRITE of {@code length} bytes from
     * local registered memory into the peer's message buffer at {@code stripeOffset}, then a FIN frame
     * on the same QP, which RC delivers after the WRITE's data (seed 000 &sect;5.3). The caller checked
     * {@link RcSubchannel#canWriteStripe()}.
     *
     * @param token handed back in {@link ChannelEvents#onSendCompleted} when the FIN (so the WRITE) completed
     */
    void writeStripe(int psn, int messageLength, long localAddress, int lkey, long remoteAddress, int rkey,
                     int stripeOffset, int length, int stripes, int stripeIndex, long token) {
        sendQueue.postDeferredUnsignaled();
        if (ch.isFailed()) {
            return;
        }
        bytesSent += length;
        if (!sendQueue.postWrite(localAddress + stripeOffset, lkey, remoteAddress + stripeOffset, rkey, length)) {
            return;
        }
        int slot = sendPool.acquire();
        int len = FinFrameCodec.encode(sendMemory, sendPool.offset(slot), psn, ch.takeCreditWord(), messageLength,
            stripeOffset, length, stripes, stripeIndex);
        // the FIN's completion is the stripe's: RC completes it after the WRITE, and it proves the FIN arrived
        sendQueue.post(slot, len, token, FrameType.FIN);
    }

    /** A bare RDMA WRITE ({@link RcSubchannel#postWrite}); its bytes count as sent. */
    boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag, boolean signaled) {
        if (ch.isFailed()) {
            return false;
        }
        bytesSent += length;
        return sendQueue.postWrite(localAddress, lkey, remoteAddress, rkey, length, tag, signaled);
    }
}
