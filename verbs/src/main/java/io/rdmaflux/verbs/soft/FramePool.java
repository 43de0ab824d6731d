package io.rdmaflux.verbs.soft;

import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * A NIC's pool of {@link SoftFrame}s. The owning engine thread claims frames from a private free
 * list; any thread gives them back by pushing onto a lock-free stack, which the owner takes whole
 * ({@code getAndSet(null)}, so no ABA) when its private list runs dry. The pool grows only while
 * more frames are in flight than ever before, so the steady state allocates nothing.
 */
final class FramePool {
    private @Nullable SoftFrame free;
    private final AtomicReference<@Nullable SoftFrame> returned = new AtomicReference<>();
    private int created;

    /** Owner thread only. */
    SoftFrame claim() {
        SoftFrame f = free;
        if (f == null) {
            f = returned.getAndSet(null);
            if (f == null) {
                created++;
                return new SoftFrame(this);
            }
        }
        free = f.next;
        f.next = null;
        return f;
    }

    /** Any thread. */
    void giveBack(SoftFrame f) {
        SoftFrame head;
        do {
            head = returned.get();
            f.next = head;
        } while (!returned.compareAndSet(head, f));
    }

    /** Any thread: gives back a chain {@code first -> ... -> last} (linked through next) with one CAS. */
    void giveBackChain(SoftFrame first, SoftFrame last) {
        SoftFrame head;
        do {
            head = returned.get();
            last.next = head;
        } while (!returned.compareAndSet(head, first));
    }

    /** Frames ever created (for tests of the no-allocation steady state). */
    int created() {
        return created;
    }
}
