package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;

/**
 * An SPI completion queue of a {@code disni} device: a ring of completions fed from the device's one
 * native CQ ({@link DeviceCompletions}) and by the provider itself (work requests flushed before the
 * native QP existed). {@link #poll} drains the native CQ when the ring is empty, so a poller never waits
 * for the provider's thread.
 *
 * <p><b>Overflow:</b> a completion beyond {@link #capacity()} is still kept (the ring grows; nothing is
 * lost) but moves every QP using this CQ to ERROR, as a CQ overrun does on hardware.
 *
 * <p><b>Concurrency:</b> {@link #poll} by one thread at a time; completions are added from any thread.
 * The sink runs without any provider lock held, so it may post.
 */
final class DisniCompletionQueue implements CompletionQueue {
    private final DisniDevice device;
    private final int capacity;
    private final List<DisniQueuePair> users = new ArrayList<>();
    private WorkCompletion[] ring;
    private WorkCompletion[] handout = new WorkCompletion[0];
    private int head;
    private int size;
    private boolean overrun;
    private boolean closed;

    DisniCompletionQueue(DisniDevice device, int capacity) {
        this.device = device;
        this.capacity = capacity;
        this.ring = filled(new WorkCompletion[Math.min(capacity, 1024)], 0);
    }

    private static WorkCompletion[] filled(WorkCompletion[] a, int from) {
        for (int i = from; i < a.length; i++) {
            a[i] = new WorkCompletion();
        }
        return a;
    }

    DisniDevice device() {
        return device;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    synchronized void addUser(DisniQueuePair qp) {
        if (!users.contains(qp)) {
            users.add(qp);
        }
    }

    synchronized void removeUser(DisniQueuePair qp) {
        users.remove(qp);
    }

    /** Adds one completion (dropped when the CQ is closed, as verbs drops them with the CQ). */
    synchronized void add(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate,
                          int qpNumber, String detail) {
        if (closed) {
            return;
        }
        if (size == ring.length) {
            WorkCompletion[] bigger = new WorkCompletion[ring.length * 2];
            for (int i = 0; i < size; i++) {
                bigger[i] = ring[(head + i) % ring.length];
            }
            ring = filled(bigger, size);
            head = 0;
        }
        ring[(head + size) % ring.length].set(wrId, status, opcode, byteLength, hasImmediate, immediate, qpNumber, 0, detail);
        size++;
        if (size > capacity) {
            overrun = true;
        }
    }

    @Override
    public int poll(int max, CompletionSink sink) {
        boolean empty;
        synchronized (this) {
            if (closed) {
                throw new VerbsException("completion queue on " + device.name() + " is closed");
            }
            empty = size == 0;
        }
        if (empty && max > 0) {
            device.completions().drain();
        }
        int n;
        synchronized (this) {
            n = Math.min(max, size);
            if (handout.length < n) {
                handout = filled(new WorkCompletion[Math.max(n, 16)], 0);
            }
            for (int i = 0; i < n; i++) {
                WorkCompletion w = ring[head];
                handout[i].set(w.wrId(), w.status(), w.opcode(), w.byteLength(), w.hasImmediate(), w.immediate(), w.qpNumber(), 0, w.detail());
                head = (head + 1) % ring.length;
                size--;
            }
        }
        for (int i = 0; i < n; i++) {
            sink.onCompletion(handout[i]);
        }
        errorUsersIfOverrun();
        return n;
    }

    /** If a completion did not fit since the last call, moves every QP using this CQ to ERROR. */
    void errorUsersIfOverrun() {
        List<DisniQueuePair> toFail;
        synchronized (this) {
            if (!overrun) {
                return;
            }
            overrun = false;
            toFail = List.copyOf(users);
        }
        for (DisniQueuePair qp : toFail) {
            qp.toError("completion queue overrun: more than " + capacity + " completions held");
        }
    }

    /** Completions waiting in the ring. */
    synchronized int size() {
        return size;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            size = 0;
        }
        device.forget(this);
    }
}
