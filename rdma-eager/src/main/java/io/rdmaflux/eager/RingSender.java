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
 * <p><b>Concurrency:</b> the progress thread of the channel only.
 */
final class RingSender implements AutoCloseable {
    private final MemoryRegion region;
    private final UnsafeBuffer memory;
    private final int stagingSlots;
    private final int stagingBytes;
    /** The completion token of each staging slot's frame. */
    private final long[] tokens;
    /** Staging slots used: {@code [stagingTail, stagingHead)} are in flight. */
    private long stagingHead;
    private long stagingTail;
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

    /** The peer freed its slots before {@code freedLow32} (a CREDIT or a piggybacked credit). */
    void onCredit(int freedLow32) {
        if (peerSlots > 0) {
            long freed = EagerControlCodec.extend(freedLow32, nextSeq);
            if (freed <= nextSeq) {
                limitSeq = Math.max(limitSeq, freed + peerSlots);
            }
        }
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
        return (int) (stagingHead % stagingSlots) * stagingBytes + RingLayout.HEAD;
    }

    /**
     * Seals the frame of {@code frameLength} bytes encoded at {@link #nextFrameOffset()} and posts its
     * WRITE on {@code rc}. The caller checked {@link #canWrite}.
     *
     * @param creditLow32 the piggybacked credit for the peer's writes into this side's ring
     * @param token       reported through {@link #onWriteCompleted} when the WRITE completes
     * @return false if the post failed (the RC channel failed and reported it)
     */
    boolean write(Channel rc, int frameLength, int creditLow32, long token) {
        int staging = (int) (stagingHead % stagingSlots);
        int base = staging * stagingBytes;
        int len = RingLayout.seal(memory, base, frameLength, nextSeq, peerSlots, creditLow32, peerCrc);
        long remote = peerAddress + (nextSeq % peerSlots) * (long) peerSlotBytes;
        tokens[staging] = token;
        stagingHead++;
        nextSeq++;
        framesSent++;
        return rc.postWrite(region.address() + base, region.lkey(), remote, peerRkey, len, staging);
    }

    /**
     * The WRITE of staging slot {@code tag} completed.
     *
     * @return its token
     */
    long onWriteCompleted(int tag) {
        int expected = (int) (stagingTail % stagingSlots);
        if (stagingTail == stagingHead || tag != expected) {
            throw new IllegalStateException("eager WRITE of staging slot " + tag + " completed but slot " + expected
                + " is the oldest in flight (" + (stagingHead - stagingTail) + " in flight)");
        }
        stagingTail++;
        return tokens[tag];
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
            + inFlight() + "}";
    }
}
