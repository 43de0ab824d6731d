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
 * <p>When the engine finds the ring full, the CQ is overrun: every QP using it moves to ERROR (as on
 * hardware) and the completion waits until there is room; nothing is lost.
 */
final class SoftCompletionQueue implements CompletionQueue {
    private static final WcStatus[] STATUSES = WcStatus.values();
    private static final WcOpcode[] OPCODES = WcOpcode.values();
    private static final long HAS_IMMEDIATE = 1L << 48;
    private static final long HAS_DETAIL = 1L << 49;

    private final SoftDevice device;
    private final int capacity;
    private final int mask;
    private long cachedHead;
    private final long[] wrIds;
    /** Per completion: byte length (bits 0-31), status (32-39), opcode (40-47), has-immediate (48), has-detail (49). */
    private final long[] words;
    /** Per completion: QP number (bits 0-31), source QPN (32-63). */
    private final long[] qps;
    private final int[] immediates;
    /** Error reasons; only slots with the has-detail bit hold one (successes store nothing). */
    private final @Nullable String[] details;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();
    private long producerTail;
    private final WorkCompletion wc = new WorkCompletion();
    volatile boolean overrun;
    private volatile boolean closed;
    /** Called after each {@link #add}; null when none was asked for. */
    private volatile @Nullable Runnable arrivalHint;

    SoftCompletionQueue(SoftDevice device, int capacity) {
        this.device = device;
        this.capacity = capacity;
        int slots = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.mask = slots - 1;
        this.wrIds = new long[slots];
        this.words = new long[slots];
        this.qps = new long[slots];
        this.immediates = new int[slots];
        this.details = new String[slots];
    }

    SoftDevice device() {
        return device;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    /** Engine: room for one more completion? Sets {@link #overrun} when not. */
    boolean hasRoom() {
        if (producerTail - cachedHead < capacity) {
            return true;
        }
        cachedHead = head.get();
        if (producerTail - cachedHead < capacity) {
            return true;
        }
        if (!closed) {
            overrun = true;
            device.cqOverran = true;
        }
        return false;
    }

    /** Engine: adds a completion; the caller checked {@link #hasRoom()}. Visible to poll at once. */
    void add(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate,
             int qpNumber, int sourceQpn, String detail) {
        int i = (int) producerTail & mask;
        wrIds[i] = wrId;
        long w = (byteLength & 0xFFFF_FFFFL) | (long) status.ordinal() << 32 | (long) opcode.ordinal() << 40;
        if (hasImmediate) {
            w |= HAS_IMMEDIATE;
            immediates[i] = immediate;
        }
        // identity first: successes pass the literal "", so the common case is one compare
        if (detail != "" && detail != null && !detail.isEmpty()) {
            w |= HAS_DETAIL;
            details[i] = detail;
        }
        words[i] = w;
        qps[i] = (qpNumber & 0xFFFF_FFFFL) | (long) sourceQpn << 32;
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
        try {
            for (int k = 0; k < n; k++) {
                int i = (int) (h + k) & mask;
                long w = words[i];
                long q = qps[i];
                boolean imm = (w & HAS_IMMEDIATE) != 0;
                String detail = "";
                if ((w & HAS_DETAIL) != 0) {
                    detail = details[i];
                    details[i] = null;
                }
                wc.set(wrIds[i], STATUSES[(int) (w >>> 32) & 0xFF], OPCODES[(int) (w >>> 40) & 0xFF], (int) w, imm,
                    imm ? immediates[i] : 0, (int) q, (int) (q >>> 32), detail);
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
        device.removeCq(this);
        SoftResources.LIVE_COMPLETION_QUEUES.decrementAndGet();
    }

    @Override
    public String toString() {
        return "cq{capacity=" + capacity + ", queued=" + size() + (closed ? ", closed" : "") + "}";
    }
}
