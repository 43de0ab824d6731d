package io.rdmaflux.eager;

import io.rdmaflux.core.frame.DataFrameCodec;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The ring's arrival rule and credits on memory written by hand (as a NIC would): laps and flags, the
 * ABA case, torn slots with and without a CRC, and frees out of order.
 */
class RingReceiverTest {
    private static final int SLOTS = 4;
    private static final int SLOT_BYTES = RingLayout.slotBytesFor(256);
    private SoftProvider provider;
    private ProtectionDomain pd;
    private UnsafeBuffer staging;

    @BeforeEach
    void open() {
        provider = SoftProvider.builder().name("ring-test").fabric(SoftFabric.mem("ring-test-" + System.nanoTime()))
            .threadingMode(ThreadingMode.INVOKER).build();
        pd = provider.devices().get(0).allocateProtectionDomain();
        staging = new UnsafeBuffer(new byte[SLOT_BYTES]);
    }

    @AfterEach
    void close() {
        pd.close();
        provider.close();
    }

    /** Stages sequence {@code seq}'s slot (a 1-message DATA frame of {@code payload} bytes with {@code fill}). */
    private int stage(long seq, int payload, byte fill, boolean crc) {
        int fo = RingLayout.HEAD;
        DataFrameCodec.encodeHeader(staging, fo, true, true, 0, (int) seq, 0, payload, payload);
        staging.setMemory(DataFrameCodec.payloadOffset(fo), payload, fill);
        return RingLayout.seal(staging, 0, FrameHeader.LENGTH + payload, seq, RingLayout.flag(seq, SLOTS), 0, crc);
    }

    private static void place(RingReceiver ring, long seq, UnsafeBuffer from, int from0, int to) {
        int base = (int) (seq % SLOTS) * SLOT_BYTES;
        ring.memory().putBytes(base + from0, from, from0, to - from0);
    }

    @Test
    void slotsArriveInSequenceOverLapsWithAlternatingFlags() {
        try (RingReceiver ring = new RingReceiver(pd, SLOTS, SLOT_BYTES, false)) {
            assertEquals(-1, ring.poll(), "an empty (zeroed) ring holds nothing");
            for (long seq = 0; seq < 5 * SLOTS; seq++) {
                int len = stage(seq, 40, (byte) seq, false);
                place(ring, seq, staging, 0, len);
                assertEquals(RingLayout.flag(seq, SLOTS), ring.memory().getByte((int) (seq % SLOTS) * SLOT_BYTES));
                int slot = ring.poll();
                assertEquals((int) (seq % SLOTS), slot, "sequence " + seq);
                assertEquals(FrameHeader.LENGTH + 40, ring.frameLength());
                assertEquals((int) seq, FrameHeader.psn(ring.memory(), ring.frameOffset()));
                assertEquals(-1, ring.poll(), "the slot after it has the previous lap's flag");
                ring.release(slot);
            }
            assertEquals(5 * SLOTS, ring.nextSeq());
            assertEquals(5 * SLOTS, ring.freedSeq());
        }
    }

    @Test
    void theSameFlagTwoLapsLaterIsNotAnArrival() {
        try (RingReceiver ring = new RingReceiver(pd, SLOTS, SLOT_BYTES, false)) {
            // laps 0 and 1 delivered; sequence 8 (lap 2, the flag of lap 0) is expected in slot 0
            for (long seq = 0; seq < 2 * SLOTS; seq++) {
                place(ring, seq, staging, 0, stage(seq, 40, (byte) 1, false));
                ring.release(ring.poll());
            }
            // slot 0 still holds sequence 4 (lap 1); write into it sequence 0's bytes again: lap 0's flag = lap 2's flag (ABA)
            place(ring, 0, staging, 0, stage(0, 40, (byte) 1, false));
            assertEquals(RingLayout.flag(8, SLOTS), ring.memory().getByte(0), "the stale slot shows lap 2's flag");
            assertEquals(-1, ring.poll(), "head and tail carry sequence 0, not 8: not an arrival");
            place(ring, 8, staging, 0, stage(8, 40, (byte) 1, false));
            assertEquals(0, ring.poll());
        }
    }

    @Test
    void aTornSlotIsNeverDeliveredWhenItCarriesACrc() {
        try (RingReceiver ring = new RingReceiver(pd, SLOTS, SLOT_BYTES, true)) {
            int len = stage(0, 200, (byte) 0x33, true);
            // the ends of the WRITE first (head and tail), the middle still stale
            place(ring, 0, staging, 0, 64);
            place(ring, 0, staging, len - 64, len);
            assertEquals(-1, ring.poll(), "head and tail are there, the middle is not: the CRC fails");
            assertEquals(-1, ring.poll());
            assertEquals(1, ring.tornSlotsSeen(), "counted once per slot");
            place(ring, 0, staging, 64, len - 64);
            assertEquals(0, ring.poll(), "complete now");
        }
    }

    @Test
    void withoutACrcATornSlotWouldBeDeliveredSoUnorderedPortsMustUseOne() {
        // the reason the protocol asks for a CRC where the port does not order the tail: the flags alone pass
        try (RingReceiver ring = new RingReceiver(pd, SLOTS, SLOT_BYTES, false)) {
            int len = stage(0, 200, (byte) 0x33, false);
            place(ring, 0, staging, 0, 64);
            place(ring, 0, staging, len - 64, len);
            assertEquals(0, ring.poll(), "flags and sequences alone accept the torn slot");
            assertEquals(0, ring.memory().getByte(ring.frameOffset() + 100), "and its middle is stale");
        }
    }

    @Test
    void freesOutOfOrderMoveTheFreedSequenceOnlyOverAContiguousRun() {
        try (RingReceiver ring = new RingReceiver(pd, SLOTS, SLOT_BYTES, false)) {
            int[] slots = new int[SLOTS];
            for (long seq = 0; seq < SLOTS; seq++) {
                place(ring, seq, staging, 0, stage(seq, 8, (byte) 0, false));
                slots[(int) seq] = ring.poll();
            }
            assertEquals(0, ring.free());
            ring.release(slots[2]);
            ring.release(slots[1]);
            assertEquals(0, ring.freedSeq(), "slot 0 still held: the sender may not pass it");
            assertEquals(0, ring.free());
            ring.release(slots[0]);
            assertEquals(3, ring.freedSeq(), "0, 1, 2 free in a row");
            ring.release(slots[3]);
            assertEquals(4, ring.freedSeq());
            assertThrows(IllegalStateException.class, () -> ring.release(slots[3]), "a second release of one slot");
        }
    }
}
