package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A soft completion queue: a preallocated single-producer/single-consumer ring, stored as a few
 * parallel arrays with the small fields packed into one {@code long} (no object per completion, four
 * array stores per completion). The producer is the device's engine; the consumer is whoever
 * calls {@link #poll}, one thread at a time. {@code poll} hands a batch to the sink with one reused
 * {@link WorkCompletion} and publishes the new head once per batch.
 *
 * <p>The ring starts at {@link #INITIAL_SLOTS} slots (or the capacity, if smaller) and the engine doubles
 * it when a completion would find it full below the capacity, so a CQ sized for a connection's worst case
 * costs ~0.6 KB until its traffic needs more (issue 15: memory per added peer; a 256-entry CQ was 8.3 KB
 * of heap at creation). Growing copies the entries not yet polled to the same logical positions of the
 * new arrays and publishes them with a volatile store before the completion that needed the room; the
 * consumer reads the arrays after its acquire of the tail, so every completion it may poll is in the
 * arrays it reads (the old arrays keep the entries written before the copy). ibv_resize_cq does the
 * same on demand on hardware; here the CQ does it itself.
 *
 * <p>When the engine finds the ring full at the capacity, the CQ is overrun: every QP using it moves to
 * ERROR (as on hardware) and the completion waits until there is room; nothing is lost.
 */
final class SoftCompletionQueue implements CompletionQueue {
    private static final WcStatus[] STATUSES = WcStatus.values();
    private static final WcOpcode[] OPCODES = WcOpcode.values();
    private static final long HAS_IMMEDIATE = 1L << 48;
    private static final long HAS_DETAIL = 1L << 49;

    /** Slots a new CQ starts with (fewer if its capacity is smaller). */
    static final int INITIAL_SLOTS = 16;

    private final SoftDevice device;
    private final int capacity;
    /** The most slots the ring grows to: the power of two at least {@link #capacity}. */
    private final int maxSlots;
    private long cachedHead;
    /** The engine's view of the arrays (it is the only writer of {@link #ring}). */
    private Ring producerRing;
    /** The arrays as published to the consumer. */
    private volatile Ring ring;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();
    private long producerTail;
    private final WorkCompletion wc = new WorkCompletion();
    volatile boolean overrun;
    private volatile boolean closed;
    /** Called after each {@link #add}; null when none was asked for. */
    private volatile @Nullable Runnable arrivalHint;

    /** One generation of the ring's storage: parallel arrays of {@code mask + 1} slots. */
    private static final class Ring {
        final int mask;
        final long[] wrIds;
        /** Per completion: byte length (bits 0-31), status (32-39), opcode (40-47), has-immediate (48), has-detail (49). */
        final long[] words;
        /** Per completion: QP number (bits 0-31), source QPN (32-63). */
        final long[] qps;
        final int[] immediates;
        /** Error reasons; only slots with the has-detail bit hold one (successes store nothing). */
        final @Nullable String[] details;

        Ring(int slots) {
            mask = slots - 1;
            wrIds = new long[slots];
            words = new long[slots];
            qps = new long[slots];
            immediates = new int[slots];
            details = new String[slots];
        }

        /** A ring of {@code slots} holding this one's entries {@code [from, to)} at the same logical positions. */
        Ring grown(int slots, long from, long to) {
            Ring r = new Ring(slots);
            for (long k = from; k < to; k++) {
                int i = (int) k & mask;
                int j = (int) k & r.mask;
                r.wrIds[j] = wrIds[i];
                r.words[j] = words[i];
                r.qps[j] = qps[i];
                r.immediates[j] = immediates[i];
                r.details[j] = details[i];
            }
            return r;
        }
    }

    SoftCompletionQueue(SoftDevice device, int capacity) {
        this.device = device;
        this.capacity = capacity;
        this.maxSlots = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.producerRing = new Ring(Math.min(INITIAL_SLOTS, maxSlots));
        this.ring = producerRing;
    }

    /** Slots the ring has now (tests: it grows on demand). */
    int slots() {
        return ring.mask + 1;
    }

    SoftDevice device() {
        return device;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    /** Engine: room for one more completion (growing the ring below the capacity)? Sets {@link #overrun} when not. */
    boolean hasRoom() {
        Ring r = producerRing;
        long used = producerTail - cachedHead;
        if (used < capacity && used <= r.mask) {
            return true;
        }
        cachedHead = head.get();
        used = producerTail - cachedHead;
        if (used < capacity) {
            if (used > r.mask) {
                // full below the capacity (so below maxSlots): double, keeping the entries not yet polled
                Ring bigger = r.grown(Math.min(maxSlots, (r.mask + 1) << 1), cachedHead, producerTail);
                producerRing = bigger;
                ring = bigger;
            }
            return true;
        }
        if (!closed) {
            overrun = true;
            device.engine.cqOverran = true;
        }
        return false;
    }

    /** Engine: adds a completion; the caller checked {@link #hasRoom()}. Visible to poll at once. */
    void add(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate,
             int qpNumber, int sourceQpn, String detail) {
        Ring r = producerRing;
        int i = (int) producerTail & r.mask;
        r.wrIds[i] = wrId;
        long w = (byteLength & 0xFFFF_FFFFL) | (long) status.ordinal() << 32 | (long) opcode.ordinal() << 40;
        if (hasImmediate) {
            w |= HAS_IMMEDIATE;
            r.immediates[i] = immediate;
        }
        // identity first: successes pass the literal "", so the common case is one compare
        if (detail != "" && detail != null && !detail.isEmpty()) {
            w |= HAS_DETAIL;
            r.details[i] = detail;
        }
        r.words[i] = w;
        r.qps[i] = (qpNumber & 0xFFFF_FFFFL) | (long) sourceQpn << 32;
        tail.lazySet(++producerTail);
        Runnable hint = arrivalHint;
        if (hint != null) {
            hint.run();
        }
    }

    @Override
    public boolean arrivalHint(Runnable hint) {
        arrivalHint = java.util.Objects.requireNonNull(hint, "hint");
        return true;
    }

    @Override
    public int poll(int max, CompletionSink sink) {
        if (closed) {
            throw new VerbsException("completion queue is closed; create a new one to poll completions");
        }
        long h = head.get();
        long available = tail.get() - h;
        int n = (int) Math.min(available, max);
        if (n <= 0) {
            return 0;
        }
        // after the acquire of tail: holds every completion below it (see the class comment)
        Ring r = ring;
        try {
            for (int k = 0; k < n; k++) {
                int i = (int) (h + k) & r.mask;
                long w = r.words[i];
                long q = r.qps[i];
                boolean imm = (w & HAS_IMMEDIATE) != 0;
                String detail = "";
                if ((w & HAS_DETAIL) != 0) {
                    detail = r.details[i];
                    r.details[i] = null;
                }
                wc.set(r.wrIds[i], STATUSES[(int) (w >>> 32) & 0xFF], OPCODES[(int) (w >>> 40) & 0xFF], (int) w, imm,
                    imm ? r.immediates[i] : 0, (int) q, (int) (q >>> 32), detail);
                sink.onCompletion(wc);
            }
        } finally {
            head.lazySet(h + n);
        }
        return n;
    }

    /** Completions waiting to be polled. */
    int size() {
        return (int) (tail.get() - head.get());
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        device.resources().removeCq(this);
        SoftResources.LIVE_COMPLETION_QUEUES.decrementAndGet();
    }

    @Override
    public String toString() {
        return "cq{capacity=" + capacity + ", queued=" + size() + (closed ? ", closed" : "") + "}";
    }
}
