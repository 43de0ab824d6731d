package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A QP's send queue: posted work requests as parallel arrays indexed by slot ({@link Slots}; at most
 * {@link #capacity} = the QP's {@code maxSendWr} outstanding), plus each slot's inline payload area.
 * {@link SendPoster#post} fills a slot and publishes it by a release store of {@link #tail}; the engine
 * frees slots by a release store of {@link #head}.
 *
 * <p>Per slot (SGEs at {@link #sgeIndex}): what was posted (wr id, opcode, flags, immediate, remote
 * address and rkey, UD destination, SGE list, total length), and what the engine learned (a READ's data
 * arrived, an error found at post or transmit time).
 *
 * <h2>Growth</h2>
 * The storage starts at {@link #INITIAL_SLOTS} slots and one SGE row (issue 15: memory per added peer;
 * a slot is ~96 bytes of heap plus {@code maxInlineBytes} of direct memory, so a QP sized for 256 work
 * requests held ~25 KB of heap and 16 KB of direct memory from creation; it now starts at ~1.2 KB and
 * 0.5 KB). The poster replaces it with a new generation when a post finds it full below the capacity
 * (twice the slots, up to the power of two at least the capacity) or a work request has more SGEs than it
 * has rows (twice the rows, up to {@link #SGES}). The poster copies nothing: it links the new generation
 * from the old one ({@link Slots#next}, a volatile store) and writes from its first index
 * ({@link Slots#start}) on into it. The engine, which also writes the slots of work requests in flight (an
 * error found at transmit time, a READ's data arrived, the address handle dropped), moves them itself, so
 * none of its writes can land in a generation already copied: when it reads the tail ({@link #engineTail})
 * and finds a newer generation linked, it copies the work requests from the published head to that
 * generation's start into it and takes its arrays as its view (the fields of this class). The two never
 * write the same slot of one generation: the poster writes indices from {@code start} on; the engine copies
 * indices below {@code start} not yet freed, whose slots in the larger generation the poster reuses only
 * after the engine frees them. The poster wrote every index below {@code start} before its store of
 * {@code next}, so the engine's volatile load of {@code next} makes them visible to the copy. Nothing is
 * dropped or reordered, and once grown to the capacity and the most SGEs posted, a post allocates nothing.
 *
 * <p>Thread-safety: the {@link Slots} of {@link #producerSlots} and the producer fields on the posting
 * thread under the QP's post lock ({@link SendPoster}); the array fields of this class (the engine's view)
 * and {@link #engineTail} on the NIC's engine thread only.
 */
final class SendRing {
    static final int SGES = SendWorkRequest.MAX_SGE;
    static final WrOpcode[] WR_OPCODES = WrOpcode.values();
    static final WcStatus[] WC_STATUSES = WcStatus.values();
    /** {@link #error} of a slot with no error. */
    static final byte NO_ERROR = -1;
    /** Slots a new send queue starts with (fewer if its capacity is smaller). */
    static final int INITIAL_SLOTS = 8;

    /** The most work requests outstanding: the QP's {@code maxSendWr}. */
    final int capacity;
    /** The most slots the storage grows to: the power of two at least {@link #capacity}. */
    private final int maxSlots;
    final int inlineStride;
    /** Next slot index to post (producer publishes with a release store). */
    final AtomicLong tail = new AtomicLong();
    /** Oldest slot index not yet completed (engine publishes with a release store). */
    final AtomicLong head = new AtomicLong();

    // ---------------------------------------------------------------- producer (posting thread)

    /** The producer's last look at {@link #head}, refreshed only when the ring looks full. */
    private long producerCachedHead;
    /** Work requests the producer may have outstanding before it looks at {@link #head} again: min(capacity, slots). */
    private int producerLimit;
    /** The generation the poster writes into. */
    private Slots producer;

    // ---------------------------------------------------------------- the engine's view (engine thread)

    /** The generation the engine reads; the fields below are its arrays. */
    private Slots engine;
    int mask;
    private int slotShift;
    long[] wrId;
    byte[] opcode;
    boolean[] signaled;
    boolean[] hasImm;
    int[] imm;
    long[] remoteAddress;
    int[] rkey;
    /** Atomic operands ({@code compare_add}, {@code swap}). */
    long[] compareAdd;
    long[] swap;
    int[] length;
    @Nullable SoftAddressHandle[] ah;
    int[] remoteQpn;
    int[] remoteQkey;
    int[] numSge;
    long[] sgeAddress;
    int[] sgeLength;
    int[] sgeLkey;
    boolean[] inline;
    /** An RDMA READ's data or an atomic's original value arrived. */
    boolean[] readDone;
    byte[] error;
    @Nullable String[] errorDetail;
    @Nullable ByteBuffer inlineData;

    SendRing(int capacity, int maxInlineBytes) {
        this.capacity = capacity;
        this.maxSlots = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.inlineStride = maxInlineBytes;
        this.producer = new Slots(Math.min(INITIAL_SLOTS, maxSlots), 1, maxInlineBytes, 0);
        this.producerLimit = Math.min(capacity, producer.mask + 1);
        adopt(producer);
    }

    /**
     * One generation of the storage: parallel arrays of {@code mask + 1} slots and {@link #sgeRows} SGEs
     * per slot (SGE-major), holding the work requests from index {@link #start} on as the poster writes
     * them, and those below it once the engine has moved them in.
     */
    static final class Slots {
        final int mask;
        final int slotShift;
        /** The first index the poster wrote into this generation. */
        final long start;
        final long[] wrId;
        final byte[] opcode;
        final boolean[] signaled;
        final boolean[] hasImm;
        final int[] imm;
        final long[] remoteAddress;
        final int[] rkey;
        final long[] compareAdd;
        final long[] swap;
        final int[] length;
        final @Nullable SoftAddressHandle[] ah;
        final int[] remoteQpn;
        final int[] remoteQkey;
        final int[] numSge;
        final int sgeRows;
        final long[] sgeAddress;
        final int[] sgeLength;
        final int[] sgeLkey;
        final boolean[] inline;
        final boolean[] readDone;
        final byte[] error;
        final @Nullable String[] errorDetail;
        final @Nullable ByteBuffer inlineData;
        final int inlineStride;
        /** The generation that replaced this one; set once by the poster, read by the engine. */
        volatile @Nullable Slots next;

        Slots(int slots, int sgeRows, int inlineStride, long start) {
            this.mask = slots - 1;
            this.slotShift = Integer.numberOfTrailingZeros(slots);
            this.start = start;
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
            this.sgeRows = sgeRows;
            sgeAddress = new long[slots * sgeRows];
            sgeLength = new int[slots * sgeRows];
            sgeLkey = new int[slots * sgeRows];
            inline = new boolean[slots];
            readDone = new boolean[slots];
            error = new byte[slots];
            errorDetail = new String[slots];
            this.inlineStride = inlineStride;
            this.inlineData = inlineStride > 0 ? ByteBuffer.allocateDirect(slots * inlineStride) : null;
        }

        int slots() {
            return mask + 1;
        }

        /** Index of SGE {@code k} of {@code slot} in the SGE arrays (see {@link SendRing#sgeIndex}). */
        int sgeIndex(int slot, int k) {
            return k << slotShift | slot;
        }

        /** Marks {@code slot} failed with {@code status}: it completes with that status and is never sent. */
        void markError(int slot, WcStatus status, String detail) {
            error[slot] = (byte) status.ordinal();
            errorDetail[slot] = detail;
        }

        /** Copies the work requests {@code [from, to)} of {@code old} to the same indices here. */
        void moveFrom(Slots old, long from, long to) {
            for (long k = from; k < to; k++) {
                int i = (int) k & old.mask;
                int j = (int) k & mask;
                wrId[j] = old.wrId[i];
                opcode[j] = old.opcode[i];
                signaled[j] = old.signaled[i];
                hasImm[j] = old.hasImm[i];
                imm[j] = old.imm[i];
                remoteAddress[j] = old.remoteAddress[i];
                rkey[j] = old.rkey[i];
                compareAdd[j] = old.compareAdd[i];
                swap[j] = old.swap[i];
                length[j] = old.length[i];
                ah[j] = old.ah[i];
                remoteQpn[j] = old.remoteQpn[i];
                remoteQkey[j] = old.remoteQkey[i];
                int n = old.numSge[i];
                numSge[j] = n;
                for (int s = 0; s < n; s++) {
                    int from2 = old.sgeIndex(i, s);
                    int to2 = sgeIndex(j, s);
                    sgeAddress[to2] = old.sgeAddress[from2];
                    sgeLength[to2] = old.sgeLength[from2];
                    sgeLkey[to2] = old.sgeLkey[from2];
                }
                inline[j] = old.inline[i];
                if (old.inline[i] && old.length[i] > 0 && inlineData != null && old.inlineData != null) {
                    inlineData.put(j * inlineStride, old.inlineData, i * inlineStride, old.length[i]);
                }
                readDone[j] = old.readDone[i];
                error[j] = old.error[i];
                errorDetail[j] = old.errorDetail[i];
            }
        }
    }

    // ---------------------------------------------------------------- producer

    /**
     * Poster: the generation to write index {@code t} (the tail) into, growing the storage when it is
     * full below the capacity; null when {@link #capacity} work requests are outstanding. One compare
     * unless the ring looks full.
     */
    @Nullable Slots producerSlots(long t) {
        if (t - producerCachedHead >= producerLimit) {
            producerCachedHead = head.get();
            long used = t - producerCachedHead;
            if (used >= capacity) {
                return null;
            }
            Slots p = producer;
            if (used > p.mask) {
                // full below the capacity (so below maxSlots)
                grow(new Slots(Math.min(maxSlots, p.slots() << 1), p.sgeRows, inlineStride, t));
            }
        }
        return producer;
    }

    /**
     * Poster, before it writes index {@code t}'s SGEs: a generation with room for {@code n} SGEs per slot
     * ({@code n} at most {@link #SGES}), doubling the rows of the current one if it has fewer.
     */
    Slots withSgeRows(long t, int n) {
        Slots p = producer;
        if (n <= p.sgeRows) {
            return p;
        }
        int rows = p.sgeRows;
        while (rows < n) {
            rows = Math.min(rows * 2, SGES);
        }
        grow(new Slots(p.slots(), rows, inlineStride, t));
        return producer;
    }

    private void grow(Slots bigger) {
        Slots p = producer;
        producer = bigger;
        producerLimit = Math.min(capacity, bigger.slots());
        p.next = bigger;
    }

    /** Slots of the poster's generation (tests: the storage grows on demand). */
    int slots() {
        return producer.slots();
    }

    /** SGE rows of the poster's generation (tests). */
    int sgeRows() {
        return producer.sgeRows;
    }

    // ---------------------------------------------------------------- engine

    /**
     * Engine: the tail (an acquire), with the engine's view holding every work request below it: a newer
     * generation the poster linked is taken over first, moving the work requests not yet freed into it.
     */
    long engineTail() {
        long t = tail.get();
        Slots next = engine.next;
        if (next != null) {
            catchUp(next);
        }
        return t;
    }

    private void catchUp(Slots next) {
        Slots e = engine;
        long from = head.get();
        while (next != null) {
            next.moveFrom(e, from, next.start);
            e = next;
            next = e.next;
        }
        adopt(e);
    }

    private void adopt(Slots s) {
        engine = s;
        mask = s.mask;
        slotShift = s.slotShift;
        wrId = s.wrId;
        opcode = s.opcode;
        signaled = s.signaled;
        hasImm = s.hasImm;
        imm = s.imm;
        remoteAddress = s.remoteAddress;
        rkey = s.rkey;
        compareAdd = s.compareAdd;
        swap = s.swap;
        length = s.length;
        ah = s.ah;
        remoteQpn = s.remoteQpn;
        remoteQkey = s.remoteQkey;
        numSge = s.numSge;
        sgeAddress = s.sgeAddress;
        sgeLength = s.sgeLength;
        sgeLkey = s.sgeLkey;
        inline = s.inline;
        readDone = s.readDone;
        error = s.error;
        errorDetail = s.errorDetail;
        inlineData = s.inlineData;
    }

    /**
     * Index of SGE {@code k} of {@code slot} in the engine's SGE arrays. SGE-major ({@code k * slots + slot}):
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

    /** Engine: marks {@code slot} failed with {@code status}: it completes with that status and is never sent. */
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
}
