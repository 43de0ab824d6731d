package io.rdmaflux.eager;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import org.agrona.UnsafeApi;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The receive ring of one rail (seed 001 &sect;4.1&ndash;4.2, &sect;4.4): {@code slots} slots of
 * {@code slotBytes}, registered once for REMOTE_WRITE and kept for the channel's life (persistent
 * association: no registration per message), polled in sequence order, and freed by the application
 * in any order.
 *
 * <p><b>Arrival</b> ({@link #poll()}): the slot of the next sequence number is complete when its head
 * flag, head sequence, tail flag and tail sequence are all of that sequence's lap ({@link RingLayout}
 * says why this rules out ABA), and, when the sending port does not order the last word
 * ({@code crc}), its CRC32C matches; a slot seen incomplete is simply read again on the next poll.
 *
 * <p><b>Credits</b>: a delivered slot is held until {@link #release}; {@link #freedSeq()} is the first
 * sequence whose slot is still held (or not yet arrived), so it moves only over a contiguous run of freed
 * slots even when the application frees them out of order, and the sender may write sequences below
 * {@code freedSeq + slots}.
 *
 * <p><b>Concurrency:</b> the progress thread of the channel only; the ring memory is written by the NIC.
 */
final class RingReceiver implements AutoCloseable {
    private final MemoryRegion region;
    private final UnsafeBuffer memory;
    private final int slots;
    private final int slotBytes;
    private final boolean crc;
    /** A zero byte {@link #headArrived()} reads after close (0 is never a lap flag). */
    private static final UnsafeBuffer CLOSED_HEAD = new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(8));
    private final boolean[] held;
    /** The ring's native address: the polling reads go to it directly (offsets kept in range by construction). */
    private final long address;
    private int heldCount;
    private long nextSeq;
    /** The slot, its offset and the flag of {@link #nextSeq}, kept incrementally: no division on the polling path. */
    private int nextSlot;
    private int nextBase;
    /** The native address of the next slot's head flag; a private zeroed byte once closed. */
    private long nextHeadAddress;
    private byte nextFlag = RingLayout.EVEN_LAP;
    private long freedSeq;
    /** {@code freedSeq mod slots}, kept incrementally. */
    private int freedSlot;
    /** The sequence whose torn or checksum-failing slot was last counted, so a slot counts once. */
    private long tornCountedSeq = -1;
    private long tornSlotsSeen;
    private long framesReceived;
    private int lastFrameOffset;
    private int lastFrameLength;
    private int lastCredit;
    private boolean closed;

    /**
     * Registers the ring.
     *
     * @param crc whether slots carry a CRC32C that must match (the port does not order the tail word)
     * @throws io.rdmaflux.verbs.VerbsException if the device refuses the registration
     */
    RingReceiver(ProtectionDomain pd, int slots, int slotBytes, boolean crc) {
        if (slots < 1) {
            throw new IllegalArgumentException("slots >= 1 required but it was " + slots);
        }
        if (slotBytes % 8 != 0 || slotBytes < RingLayout.OVERHEAD + 24) {
            throw new IllegalArgumentException("slotBytes a multiple of 8 and >= " + (RingLayout.OVERHEAD + 24) + " required but it was " + slotBytes);
        }
        this.slots = slots;
        this.slotBytes = slotBytes;
        this.crc = crc;
        this.region = pd.allocateMemory((long) slots * slotBytes, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        this.memory = new UnsafeBuffer(region.buffer());
        if ((memory.addressOffset() & 7) != 0) {
            region.deregister();
            throw new IllegalStateException("the ring's memory at 0x" + Long.toHexString(memory.addressOffset())
                + " is not 8-byte aligned; the tail word must be");
        }
        this.held = new boolean[slots];
        this.address = memory.addressOffset();
        this.nextHeadAddress = address + RingLayout.HEAD_FLAG_OFFSET;
    }

    int slots() {
        return slots;
    }

    int slotBytes() {
        return slotBytes;
    }

    boolean crc() {
        return crc;
    }

    long address() {
        return region.address();
    }

    int rkey() {
        return region.rkey();
    }

    UnsafeBuffer memory() {
        return memory;
    }

    /** The sequence number expected next. */
    long nextSeq() {
        return nextSeq;
    }

    /** The first sequence whose slot is not free: the sender may write below {@code freedSeq + slots}. */
    long freedSeq() {
        return freedSeq;
    }

    /** Slots the application holds. */
    int held() {
        return heldCount;
    }

    /** Slots free for the sender: not holding an undelivered or unreleased frame. */
    int free() {
        return (int) (slots - (nextSeq - freedSeq));
    }

    long tornSlotsSeen() {
        return tornSlotsSeen;
    }

    long framesReceived() {
        return framesReceived;
    }

    /** Offset of the frame {@link #poll()} found. */
    int frameOffset() {
        return lastFrameOffset;
    }

    /** Length of the frame {@link #poll()} found, bytes. */
    int frameLength() {
        return lastFrameLength;
    }

    /** The credit the frame {@link #poll()} found piggybacks (the low 32 bits of the writer's ring's freed sequence). */
    int piggybackedCredit() {
        return lastCredit;
    }

    /**
     * Whether the next slot's head flag is this lap's: the one read an idle ring costs per duty cycle
     * (small enough to be inlined into the polling loop; {@link #poll()} then checks the rest). False once
     * closed (the address is then never read).
     */
    boolean headArrived() {
        return UnsafeApi.getByteVolatile(null, nextHeadAddress) == nextFlag;
    }

    /**
     * Looks at the slot of the next sequence number and takes it when it arrived completely.
     *
     * @return the slot index, now held (its frame at {@link #frameOffset()}), or -1 if it has not arrived
     *         completely
     */
    int poll() {
        return arrived() ? take() : -1;
    }

    /**
     * Whether the slot of the next sequence number arrived completely (flags, sequence in head and tail,
     * CRC where asked); when it did, its frame is at {@link #frameOffset()} for {@link #frameLength()} bytes
     * and stays there, not yet taken ({@link #take()}), so a caller can look at it first.
     */
    boolean arrived() {
        if (closed) {
            return false;
        }
        int base = nextBase;
        byte flag = nextFlag;
        // the next slot's head flag, read without a bounds check: base is a slot offset this ring computed
        if (UnsafeApi.getByteVolatile(null, address + base + RingLayout.HEAD_FLAG_OFFSET) != flag) {
            return false;
        }
        long seq = nextSeq;
        int length = memory.getInt(base + RingLayout.LENGTH_OFFSET, RingLayout.ORDER);
        if (memory.getInt(base + RingLayout.SEQ_OFFSET, RingLayout.ORDER) != (int) seq
            || length < io.rdmaflux.core.frame.FrameHeader.LENGTH || RingLayout.writeLength(length) > slotBytes) {
            // the head of an older lap with this lap's flag, or a head not yet complete
            return false;
        }
        int tail = base + RingLayout.HEAD + RingLayout.pad8(length);
        long word = memory.getLongVolatile(tail);
        if (word != RingLayout.tailWord(seq, flag)) {
            return false;
        }
        // the tail is of this sequence: re-read the head behind the acquire of the tail
        if (memory.getInt(base + RingLayout.LENGTH_OFFSET, RingLayout.ORDER) != length
            || memory.getInt(base + RingLayout.SEQ_OFFSET, RingLayout.ORDER) != (int) seq) {
            return false;
        }
        if (crc && RingLayout.crc(memory, base, length) != memory.getInt(base + RingLayout.CRC_OFFSET, RingLayout.ORDER)) {
            if (tornCountedSeq != seq) {
                tornCountedSeq = seq;
                tornSlotsSeen++;
            }
            return false;
        }
        lastFrameOffset = base + RingLayout.HEAD;
        lastFrameLength = length;
        return true;
    }

    /**
     * Takes the slot {@link #arrived()} just found complete: held from now on, the next sequence expected.
     *
     * @return the slot index (its frame at {@link #frameOffset()})
     */
    int take() {
        int base = nextBase;
        long seq = nextSeq;
        int slot = nextSlot;
        lastCredit = memory.getInt(base + RingLayout.CREDIT_OFFSET, RingLayout.ORDER);
        held[slot] = true;
        heldCount++;
        nextSeq = seq + 1;
        if (++nextSlot == slots) {
            nextSlot = 0;
            nextFlag = nextFlag == RingLayout.EVEN_LAP ? RingLayout.ODD_LAP : RingLayout.EVEN_LAP;
        }
        nextBase = nextSlot * slotBytes;
        nextHeadAddress = address + nextBase + RingLayout.HEAD_FLAG_OFFSET;
        framesReceived++;
        return slot;
    }

    /**
     * Frees a slot (any order); {@link #freedSeq()} moves over the contiguous run of free slots.
     *
     * @throws IllegalStateException if the slot is not held
     */
    void release(int slot) {
        if (!held[slot]) {
            throw new IllegalStateException("ring slot " + slot + " released but it is not held");
        }
        held[slot] = false;
        heldCount--;
        while (freedSeq < nextSeq && !held[freedSlot]) {
            freedSeq++;
            if (++freedSlot == slots) {
                freedSlot = 0;
            }
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            // headArrived() must not read the deregistered memory: it reads a byte that never holds a flag
            nextHeadAddress = CLOSED_HEAD.addressOffset();
            region.deregister();
        }
    }

    @Override
    public String toString() {
        return "RingReceiver{slots=" + slots + "x" + slotBytes + " B, next=" + nextSeq + ", freed=" + freedSeq + ", held=" + heldCount
            + (crc ? ", crc" : "") + "}";
    }
}
