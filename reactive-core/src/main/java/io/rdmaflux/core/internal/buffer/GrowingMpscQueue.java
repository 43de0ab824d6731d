package io.rdmaflux.core.internal.buffer;

import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.jspecify.annotations.Nullable;

import java.util.Arrays;

/**
 * A many-producer, one-consumer queue that starts small and doubles up to a largest capacity: a
 * {@link ManyToOneConcurrentArrayQueue} (Agrona) that a producer who finds it full replaces with one of
 * twice the capacity. The full one is kept and drained with the current one for good, so an element
 * offered to it by a producer that had not seen the replacement is never lost. Growth runs under a lock
 * and allocates; it happens only while more elements wait at once than ever before, so once grown an
 * offer and a poll are the array queue's own (no allocation, no lock). At most
 * {@code log2(maxCapacity / initialCapacity)} queues are kept, their capacities summing to less than the
 * current one.
 *
 * <p>Used where the largest capacity is a worst case most owners never reach (a receive release queue
 * sized for every message of every receive buffer, kept by each of many connections).
 *
 * <p><b>Concurrency:</b> {@link #offer} on any thread; {@link #poll} and {@link #capacity} on the one consumer thread.
 *
 * @param <E> element type
 */
public final class GrowingMpscQueue<E> {
    private final int maxCapacity;
    private volatile ManyToOneConcurrentArrayQueue<E> current;
    /** Queues replaced by a larger one, oldest first (written under the lock, read by the consumer). */
    private volatile ManyToOneConcurrentArrayQueue<E>[] retired;

    /**
     * @param initialCapacity elements to start with (rounded up to a power of two by the array queue)
     * @param maxCapacity     the most elements that ever wait at once: the queue grows to the power of two
     *                        holding it (the queues it outgrew hold some more)
     */
    @SuppressWarnings("unchecked")
    public GrowingMpscQueue(int initialCapacity, int maxCapacity) {
        if (initialCapacity < 2 || maxCapacity < initialCapacity) {
            throw new IllegalArgumentException("2 <= initialCapacity <= maxCapacity required but they were " + initialCapacity
                + " and " + maxCapacity);
        }
        this.maxCapacity = maxCapacity;
        this.current = new ManyToOneConcurrentArrayQueue<>(initialCapacity);
        this.retired = new ManyToOneConcurrentArrayQueue[0];
    }

    /**
     * Offers {@code e} (any thread), growing the queue if it is full and below its largest capacity.
     *
     * @return false only if the queue reached its largest capacity and is full
     */
    public boolean offer(E e) {
        for (;;) {
            ManyToOneConcurrentArrayQueue<E> q = current;
            if (q.offer(e)) {
                return true;
            }
            if (q.capacity() >= maxCapacity) {
                return false;
            }
            grow(q);
        }
    }

    private synchronized void grow(ManyToOneConcurrentArrayQueue<E> full) {
        if (current != full) {
            // another producer grew it meanwhile
            return;
        }
        ManyToOneConcurrentArrayQueue<E>[] r = Arrays.copyOf(retired, retired.length + 1);
        r[r.length - 1] = full;
        retired = r;
        current = new ManyToOneConcurrentArrayQueue<>(Math.min(full.capacity() * 2, Integer.highestOneBit(maxCapacity - 1) << 1));
    }

    /**
     * The next element, or null when none waits (consumer thread): from the current queue, then (only
     * when it is empty, so a drain loop pays for them once) from the replaced ones. Order across queues is
     * not kept.
     */
    public @Nullable E poll() {
        E e = current.poll();
        if (e != null) {
            return e;
        }
        for (ManyToOneConcurrentArrayQueue<E> q : retired) {
            e = q.poll();
            if (e != null) {
                return e;
            }
        }
        return null;
    }

    /** The capacity now (grows by doubling). */
    public int capacity() {
        return current.capacity();
    }
}
