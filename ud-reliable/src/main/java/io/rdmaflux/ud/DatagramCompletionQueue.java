package io.rdmaflux.ud;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.WorkCompletion;

import java.util.ArrayDeque;

/**
 * The completion queue of {@link ReliableDatagramQp}s: completions are made in software when DR acknowledges a
 * message (send) or places one (receive), and handed out by {@link #poll}. Not thread-safe: the progress thread
 * that drives the channel is its only user.
 */
final class DatagramCompletionQueue implements CompletionQueue {
    private final int capacity;
    private final ArrayDeque<WorkCompletion> completions = new ArrayDeque<>();
    private boolean closed;

    DatagramCompletionQueue(int capacity) {
        this.capacity = capacity;
    }

    void add(WorkCompletion wc) {
        if (!closed) {
            completions.add(wc);
        }
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public int poll(int max, CompletionSink sink) {
        int n = 0;
        while (n < max) {
            WorkCompletion wc = completions.poll();
            if (wc == null) {
                break;
            }
            sink.onCompletion(wc);
            n++;
        }
        return n;
    }

    @Override
    public void close() {
        closed = true;
        completions.clear();
    }
}
