package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A soft completion queue: a preallocated single-producer/single-consumer ring, stored as parallel
 * arrays (no object per completion). The producer is the device's engine; the consumer is whoever
 * calls {@link #poll}, one thread at a time. {@code poll} hands a batch to the sink with one reused
 * {@link WorkCompletion} and publishes the new head once per batch.
 *
 * <p>When the engine finds the ring full, the CQ is overrun: every QP using it moves to ERROR (as on
 * hardware) and the completion waits until there is room; nothing is lost.
 */
final class SoftCompletionQueue implements CompletionQueue {
    private static final WcStatus[] STATUSES = WcStatus.values();
    private static final WcOpcode[] OPCODES = WcOpcode.values();

    private final SoftDevice device;
    private final int capacity;
    private final int mask;
    private long cachedHead;
    private final long[] wrIds;
    private final byte[] statuses;
    private final byte[] opcodes;
    private final int[] byteLengths;
    private final int[] immediates;
    private final boolean[] hasImmediates;
    private final int[] qpNumbers;
    private final int[] sourceQpns;
    private final String[] details;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();
    private long producerTail;
    private final WorkCompletion wc = new WorkCompletion();
    volatile boolean overrun;
    private volatile boolean closed;

    SoftCompletionQueue(SoftDevice device, int capacity) {
        this.device = device;
        this.capacity = capacity;
        int slots = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.mask = slots - 1;
        this.wrIds = new long[slots];
        this.statuses = new byte[slots];
        this.opcodes = new byte[slots];
        this.byteLengths = new int[slots];
        this.immediates = new int[slots];
        this.hasImmediates = new boolean[slots];
        this.qpNumbers = new int[slots];
        this.sourceQpns = new int[slots];
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
        }
        return false;
    }

    /** Engine: adds a completion; the caller checked {@link #hasRoom()}. Visible to poll at once. */
    void add(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate,
             int qpNumber, int sourceQpn, String detail) {
        int i = (int) producerTail & mask;
        wrIds[i] = wrId;
        statuses[i] = (byte) status.ordinal();
        opcodes[i] = (byte) opcode.ordinal();
        byteLengths[i] = byteLength;
        hasImmediates[i] = hasImmediate;
        if (hasImmediate) {
            immediates[i] = immediate;
        }
        qpNumbers[i] = qpNumber;
        sourceQpns[i] = sourceQpn;
        if (details[i] != detail) {
            details[i] = detail;
        }
        tail.lazySet(++producerTail);
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
                boolean imm = hasImmediates[i];
                wc.set(wrIds[i], STATUSES[statuses[i]], OPCODES[opcodes[i]], byteLengths[i], imm,
                    imm ? immediates[i] : 0, qpNumbers[i], sourceQpns[i], details[i]);
                if (details[i] != "") {
                    details[i] = "";
                }
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
