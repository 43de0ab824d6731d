package io.rdmaflux.eager;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The send side of one rail's eager ring (seed 001 &sect;4.1&ndash;4.4): a staging ring registered once
 * (persistent, like the receiver's ring), where a frame is encoded in place with its slot head and tail
 * and then written by one RDMA WRITE into the peer's ring slot of the next sequence number.
 *
 * <p><b>Credits</b>: the peer's ring is usable between its OFFER and its REVOKE; sequence {@code s}
 * may be written while {@code s < freedSeq + slots}, with the peer's freed sequence taken from the OFFER,
 * CREDIT messages and the credit every ring slot it writes back piggybacks (&sect;4.4). A staging slot is
 * busy until its WRITE completes; RC completes a send queue in order, so staging slots are reused in
 * order.
 *
 * <p><b>Selective signalling</b> (as verbs users do; seed 001 &sect;4.3 keeps per-message work low):
 * only every {@code stagingSlots / 2}-th ring WRITE is signalled; the NIC reports the unsignalled ones
 * before it when it completes (RC completes in order), which frees their staging slots, so at most
 * {@code stagingSlots / 2 - 1} staging slots wait for a later signal and the ring never stalls on
 * them. A frame is reported <em>sent</em> (its token) as soon as either its WRITE is retired or the peer's
 * freed sequence passes it: a slot the peer freed was polled, so the WRITE was placed &mdash; in a
 * request/response exchange the reply's piggybacked credit confirms the request, with no completion at
 * all. When unsignalled WRITEs carry tokens no credit confirmed and no WRITE was posted for
 * {@link #FLUSH_AFTER_NS}, one signalled zero-length WRITE ({@link #FLUSH_TAG}) retires them
 * ({@link #flushDue}), so a frame is never left unreported when traffic stops.
 *
 * <p><b>Concurrency:</b> the progress thread of the channel only.
 */
final class RingSender implements AutoCloseable {
    /** The tag of the zero-length signalled WRITE that retires unsignalled ones ({@link #flushDue}). */
    static final int FLUSH_TAG = (1 << 28) - 1;
    /**
     * Ring WRITEs are tagged {@code TAG_BASE + staging slot}: the upper half of the channel's tag space
     * [0, 2^28) is the ring's, the lower half is left to one-sided WRITEs posted through the eager channel.
     */
    static final int TAG_BASE = 1 << 27;
    /** Unreported unsignalled WRITEs are flushed after this long without a new WRITE, ns. */
    static final long FLUSH_AFTER_NS = 200_000;
    private final MemoryRegion region;
    private final UnsafeBuffer memory;
    private final int stagingSlots;
    private final int stagingBytes;
    /** The completion token of each staging slot's frame. */
    private final long[] tokens;
    /** Staging slots used: {@code [stagingTail, stagingHead)} are in flight; sequence {@code s} is in staging slot {@code s mod stagingSlots}. */
    private long stagingHead;
    private long stagingTail;
    /** {@code stagingHead mod stagingSlots} and {@code stagingTail mod stagingSlots}, kept incrementally (no division per frame). */
    private int headSlot;
    private int tailSlot;
    /** Every frame before this sequence was reported sent (retired, or confirmed by the peer's credit). */
    private long reportedSeq;
    /** The peer freed (so polled) every slot before this sequence. */
    private long deliveredSeq;
    /** Frames with a token not yet reported sent. */
    private int unreported;
    private final int signalInterval;
    private int unsignaledRun;
    /** The last WRITE posted was unsignalled and no signalled WRITE followed it yet. */
    private boolean unsignaledTail;
    private boolean flushInFlight;
    private long lastWriteNs;
    private long signaledWrites;
    private long flushes;
    /** The peer's slot of {@code nextSeq} ({@code nextSeq mod peerSlots}) and its lap flag, kept incrementally. */
    private int peerSlot;
    private byte peerFlag = RingLayout.EVEN_LAP;
    private boolean active;
    private long peerAddress;
    private int peerRkey;
    private int peerSlots;
    private int peerSlotBytes;
    private boolean peerCrc;
    private long nextSeq;
    private long limitSeq;
    private long framesSent;
    private boolean closed;

    /** Registers {@code stagingSlots} staging slots of {@code stagingBytes}. */
    RingSender(ProtectionDomain pd, int stagingSlots, int stagingBytes) {
        if (stagingSlots < 1) {
            throw new IllegalArgumentException("stagingSlots >= 1 required but it was " + stagingSlots);
        }
        this.stagingSlots = stagingSlots;
        this.stagingBytes = stagingBytes;
        this.region = pd.allocateMemory((long) stagingSlots * stagingBytes, Access.LOCAL_WRITE);
        this.memory = new UnsafeBuffer(region.buffer());
        this.tokens = new long[stagingSlots];
        this.signalInterval = Math.max(1, stagingSlots / 2);
    }

    /**
     * The peer offers its ring: writes may go from sequence {@code nextSeqLow32} on.
     *
     * @throws io.rdmaflux.core.RdmaProtocolException if the offered sequence is not the one this side writes next
     */
    void offer(long address, int rkey, int slots, int slotBytes, boolean crc, int nextSeqLow32, int freedLow32) {
        long expected = EagerControlCodec.extend(nextSeqLow32, nextSeq);
        if (expected != nextSeq) {
            throw new io.rdmaflux.core.RdmaProtocolException("eager ring offered from sequence " + expected + " but this side writes "
                + nextSeq + " next");
        }
        this.peerAddress = address;
        this.peerRkey = rkey;
        this.peerSlot = (int) (nextSeq % slots);
        this.peerFlag = RingLayout.flag(nextSeq, slots);
        this.peerSlots = slots;
        this.peerSlotBytes = slotBytes;
        this.peerCrc = crc;
        this.limitSeq = Math.max(limitSeq, EagerControlCodec.extend(freedLow32, nextSeq) + slots);
        this.active = true;
    }

    /** The peer revoked its ring: no more writes. */
    void revoke() {
        active = false;
    }

    boolean active() {
        return active;
    }

    /**
     * The peer freed its slots before {@code freedLow32} (a CREDIT or a piggybacked credit): more may be
     * written, and the frames before it were delivered ({@link #nextConfirmed}).
     */
    void onCredit(int freedLow32) {
        if (peerSlots > 0) {
            long freed = EagerControlCodec.extend(freedLow32, nextSeq);
            if (freed <= nextSeq) {
                limitSeq = Math.max(limitSeq, freed + peerSlots);
                if (freed > deliveredSeq) {
                    deliveredSeq = freed;
                }
            }
        }
    }

    /** Whether a frame the peer's credit confirmed is still to be reported ({@link #nextConfirmed}). */
    boolean hasConfirmed() {
        return reportedSeq < deliveredSeq;
    }

    /**
     * The token of the next frame the peer's credit confirmed delivered, now reported; {@code NONE}
     * for a frame without one. Call while {@link #hasConfirmed()}.
     */
    long nextConfirmed() {
        long seq = reportedSeq++;
        int staging = (int) (seq % stagingSlots);
        long token = tokens[staging];
        if (token != WorkRequestTokens.NONE) {
            tokens[staging] = WorkRequestTokens.NONE;
            unreported--;
        }
        return token;
    }

    /** Frames with a token neither retired nor confirmed by the peer's credit: still in flight for the connection. */
    int unreported() {
        return unreported;
    }

    /**
     * Whether unsignalled WRITEs carry unreported tokens and none was posted for {@link #FLUSH_AFTER_NS}:
     * then {@link #postFlush} retires them.
     */
    /** Unsignalled WRITEs wait to be retired by a flush once traffic stops ({@link #flushDue}): a timer runs. */
    boolean flushPending() {
        return unsignaledTail && unreported > 0 && !flushInFlight;
    }

    boolean flushDue(long nowNs) {
        return unsignaledTail && unreported > 0 && !flushInFlight && nowNs - lastWriteNs >= FLUSH_AFTER_NS;
    }

    /** Posts one signalled zero-length WRITE into the peer's ring, which retires the unsignalled WRITEs before it. */
    boolean postFlush(Channel rc) {
        flushInFlight = true;
        unsignaledTail = false;
        unsignaledRun = 0;
        flushes++;
        return rc.postWrite(region.address(), region.lkey(), peerAddress, peerRkey, 0, FLUSH_TAG, true);
    }

    long signaledWrites() {
        return signaledWrites;
    }

    long flushes() {
        return flushes;
    }

    /** Ring credits: sequences this side may write now. */
    long credits() {
        return active ? Math.max(0, limitSeq - nextSeq) : 0;
    }

    /** Whether one frame of {@code frameBytes} could be written now (credit, staging slot, fits the peer's slot and staging). */
    boolean canWrite(int frameBytes) {
        return active && nextSeq < limitSeq && stagingHead - stagingTail < stagingSlots
            && RingLayout.writeLength(frameBytes) <= Math.min(peerSlotBytes, stagingBytes);
    }

    /** Whether frames of up to {@code frameBytes} fit the peer's slots at all. */
    boolean fits(int frameBytes) {
        return RingLayout.writeLength(frameBytes) <= Math.min(peerSlotBytes, stagingBytes);
    }

    /** The staging memory. */
    UnsafeBuffer memory() {
        return memory;
    }

    /** Offset in {@link #memory()} where the next frame is encoded. */
    int nextFrameOffset() {
        return headSlot * stagingBytes + RingLayout.HEAD;
    }

    /**
     * Seals the frame of {@code frameLength} bytes encoded at {@link #nextFrameOffset()} and posts its
     * WRITE on {@code rc}. The caller checked {@link #canWrite}.
     *
     * @param creditLow32 the piggybacked credit for the peer's writes into this side's ring
     * @param token       reported through {@link #onWriteCompleted} when the WRITE completes, or
     *                    {@link #nextConfirmed} when the peer's credit passes it, whichever comes first
     * @param nowNs       the duty cycle's time, for {@link #flushDue}
     * @return false if the post failed (the RC channel failed and reported it)
     */
    boolean write(Channel rc, int frameLength, int creditLow32, long token, long nowNs) {
        int staging = headSlot;
        int base = staging * stagingBytes;
        int len = RingLayout.seal(memory, base, frameLength, nextSeq, peerFlag, creditLow32, peerCrc);
        long remote = peerAddress + peerSlot * (long) peerSlotBytes;
        tokens[staging] = token;
        if (token != WorkRequestTokens.NONE) {
            unreported++;
        }
        stagingHead++;
        if (++headSlot == stagingSlots) {
            headSlot = 0;
        }
        nextSeq++;
        if (++peerSlot == peerSlots) {
            peerSlot = 0;
            peerFlag = peerFlag == RingLayout.EVEN_LAP ? RingLayout.ODD_LAP : RingLayout.EVEN_LAP;
        }
        framesSent++;
        lastWriteNs = nowNs;
        boolean signaled = ++unsignaledRun >= signalInterval;
        if (signaled) {
            unsignaledRun = 0;
            signaledWrites++;
        }
        unsignaledTail = !signaled;
        return rc.postWrite(region.address() + base, region.lkey(), remote, peerRkey, len, TAG_BASE + staging, signaled);
    }

    /** Whether {@code tag} is one of this ring's WRITEs (a staging slot's or the flush), not a one-sided WRITE. */
    static boolean isRingTag(int tag) {
        return tag >= TAG_BASE;
    }

    /**
     * The ring WRITE tagged {@code tag} completed.
     *
     * @return its token
     */
    long onWriteCompleted(int tag) {
        if (tag == FLUSH_TAG) {
            flushInFlight = false;
            return WorkRequestTokens.NONE;
        }
        int slot = tag - TAG_BASE;
        int expected = tailSlot;
        if (stagingTail == stagingHead || slot != expected) {
            throw new IllegalStateException("eager WRITE of staging slot " + slot + " completed but slot " + expected
                + " is the oldest in flight (" + (stagingHead - stagingTail) + " in flight)");
        }
        stagingTail++;
        if (++tailSlot == stagingSlots) {
            tailSlot = 0;
        }
        if (reportedSeq < stagingTail) {
            reportedSeq = stagingTail;
        }
        long token = tokens[slot];
        if (token != WorkRequestTokens.NONE) {
            tokens[slot] = WorkRequestTokens.NONE;
            unreported--;
        }
        return token;
    }

    /** Staging slots free. */
    int stagingFree() {
        return (int) (stagingSlots - (stagingHead - stagingTail));
    }

    int stagingSlots() {
        return stagingSlots;
    }

    /** WRITEs in flight. */
    int inFlight() {
        return (int) (stagingHead - stagingTail);
    }

    long nextSeq() {
        return nextSeq;
    }

    long framesSent() {
        return framesSent;
    }

    /** After a failure: every frame whose WRITE did not complete, with its token. */
    void forEachUnacked(Channel.UnackedSend visitor) {
        for (long s = stagingTail; s < stagingHead; s++) {
            int staging = (int) (s % stagingSlots);
            if (tokens[staging] != WorkRequestTokens.NONE) {
                visitor.frame(tokens[staging], memory, staging * stagingBytes + RingLayout.HEAD);
            }
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            active = false;
            region.deregister();
        }
    }

    @Override
    public String toString() {
        return "RingSender{" + (active ? "active" : "inactive") + ", next=" + nextSeq + ", limit=" + limitSeq + ", inFlight="
            + inFlight() + ", unreported=" + unreported + "}";
    }
}
