package io.rdmaflux.verbs.soft;

import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * A multi-producer, single-consumer inbox of frames, intrusive (linked through
 * {@link SoftFrame#next}, no node allocation). Producers push with one CAS; the consumer takes the
 * whole stack with one {@code getAndSet} and reverses it, which restores each producer's push order.
 */
final class FrameInbox {
    private final AtomicReference<@Nullable SoftFrame> stack = new AtomicReference<>();

    /** Any thread. */
    void push(SoftFrame f) {
        SoftFrame head;
        do {
            head = stack.get();
            f.next = head;
        } while (!stack.compareAndSet(head, f));
    }

    /**
     * Any thread: pushes a chain linked newest-first ({@code newest -> ... -> oldest}) with one CAS;
     * {@link #drain()} yields it oldest first.
     */
    void pushChain(SoftFrame newest, SoftFrame oldest) {
        SoftFrame head;
        do {
            head = stack.get();
            oldest.next = head;
        } while (!stack.compareAndSet(head, newest));
    }

    /** Consumer only: every pushed frame, oldest first, linked through {@code next}; null if none. */
    @Nullable SoftFrame drain() {
        SoftFrame f = stack.get();
        if (f == null) {
            return null;
        }
        f = stack.getAndSet(null);
        SoftFrame reversed = null;
        while (f != null) {
            SoftFrame n = f.next;
            f.next = reversed;
            reversed = f;
            f = n;
        }
        return reversed;
    }

    boolean isEmpty() {
        return stack.get() == null;
    }
}
