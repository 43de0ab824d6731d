package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A QP's send queue storage: posted work requests as parallel arrays indexed by slot (a power of two
 * at least the QP's {@code maxSendWr}; at most {@code capacity} are outstanding), plus each slot's
 * inline payload area. {@link SendPoster#post} fills a slot and publishes it by a release
 * store of {@link #tail}; the engine frees slots by a release store of {@link #head}.
 *
 * <p>Per slot (SGEs at {@link #sgeIndex}, as many rows as the most SGEs posted at once): what was posted (wr id, opcode, flags, immediate, remote address and rkey, UD
 * destination, SGE list, total length), and what the engine learned (a READ's data arrived, an
 * error found at post or transmit time).
 */
final class SendRing {
    static final int SGES = SendWorkRequest.MAX_SGE;
    static final WrOpcode[] WR_OPCODES = WrOpcode.values();
    static final WcStatus[] WC_STATUSES = WcStatus.values();
    /** {@link #error} of a slot with no error. */
    static final byte NO_ERROR = -1;

    final int capacity;
    final int mask;
    private final int slotShift;
    final long[] wrId;
    final byte[] opcode;
    final boolean[] signaled;
    final boolean[] hasImm;
    final int[] imm;
    final long[] remoteAddress;
    final int[] rkey;
    /** Atomic operands ({@code compare_add}, {@code swap}). */
    final long[] compareAdd;
    final long[] swap;
    final int[] length;
    final @Nullable SoftAddressHandle[] ah;
    final int[] remoteQpn;
    final int[] remoteQkey;
    final int[] numSge;
    /**
     * The SGE arrays hold {@link #sgeRows} SGEs per slot: one to start with (most work requests have one),
     * grown by the poster ({@link #ensureSgeRows}) to the most SGEs posted in one work request so far, up
     * to {@link #SGES}. The engine reads them after its acquire of {@link #tail}, so it sees the arrays
     * the poster wrote a slot's SGEs into; earlier slots are in both.
     */
    long[] sgeAddress;
    int[] sgeLength;
    int[] sgeLkey;
    int sgeRows;
    final boolean[] inline;
    /** An RDMA READ's data or an atomic's original value arrived. */
    final boolean[] readDone;
    final byte[] error;
    final @Nullable String[] errorDetail;
    final @Nullable ByteBuffer inlineData;
    final int inlineStride;
    /** Next slot index to post (producer publishes with a release store). */
    final AtomicLong tail = new AtomicLong();
    /** Oldest slot index not yet completed (engine publishes with a release store). */
    final AtomicLong head = new AtomicLong();
    /** The producer's last look at {@link #head}, refreshed only when the ring looks full. */
    long producerCachedHead;

    /**
     * Index of SGE {@code k} of {@code slot} in the SGE arrays. SGE-major ({@code k * slots + slot}):
     * SGE 0 of consecutive slots shares cache lines, so a burst of one-SGE sends touches one line
     * per eight slots instead of one line per slot in each SGE array.
     */
    int sgeIndex(int slot, int k) {
        return k << slotShift | slot;
    }

    /** The opcode posted in {@code slot}. */
    WrOpcode op(int slot) {
        return WR_OPCODES[opcode[slot]];
    }

    /** Marks {@code slot} failed with {@code status}: it completes with that status and is never sent. */
    void markError(int slot, WcStatus status, String detail) {
        error[slot] = (byte) status.ordinal();
        errorDetail[slot] = detail;
    }

    /** The completion opcode of a work request opcode. */
    static WcOpcode wcOpcode(WrOpcode op) {
        return switch (op) {
            case SEND, SEND_WITH_IMM -> WcOpcode.SEND;
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
            case ATOMIC_FETCH_AND_ADD -> WcOpcode.FETCH_ADD;
            case ATOMIC_CMP_AND_SWP -> WcOpcode.COMP_SWAP;
        };
    }

    SendRing(int capacity, int maxInlineBytes) {
        this.capacity = capacity;
        int slots = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.mask = slots - 1;
        this.slotShift = Integer.numberOfTrailingZeros(slots);
        wrId = new long[slots];
        opcode = new byte[slots];
        signaled = new boolean[slots];
        hasImm = new boolean[slots];
        imm = new int[slots];
        remoteAddress = new long[slots];
        rkey = new int[slots];
        compareAdd = new long[slots];
        swap = new long[slots];
        length = new int[slots];
        ah = new SoftAddressHandle[slots];
        remoteQpn = new int[slots];
        remoteQkey = new int[slots];
        numSge = new int[slots];
        sgeRows = 1;
        sgeAddress = new long[slots];
        sgeLength = new int[slots];
        sgeLkey = new int[slots];
        inline = new boolean[slots];
        readDone = new boolean[slots];
        error = new byte[slots];
        errorDetail = new String[slots];
        this.inlineStride = maxInlineBytes;
        this.inlineData = maxInlineBytes > 0 ? ByteBuffer.allocateDirect(slots * maxInlineBytes) : null;
    }

    /**
     * Makes room for {@code n} SGEs per slot (poster thread, before it writes a slot's SGEs): doubles the
     * rows until they hold {@code n}, keeping every slot's SGEs (SGE-major, so the old rows are a prefix).
     */
    void ensureSgeRows(int n) {
        if (n <= sgeRows) {
            return;
        }
        int rows = sgeRows;
        while (rows < n) {
            rows = Math.min(rows * 2, SGES);
        }
        int slots = mask + 1;
        sgeAddress = java.util.Arrays.copyOf(sgeAddress, slots * rows);
        sgeLength = java.util.Arrays.copyOf(sgeLength, slots * rows);
        sgeLkey = java.util.Arrays.copyOf(sgeLkey, slots * rows);
        sgeRows = rows;
    }
}
