package io.rdmaflux.core;

import org.agrona.concurrent.OneToOneConcurrentArrayQueue;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The subscriber one {@code send(publisher)} puts on the user's publisher. It never requests by
 * itself: the connection's progress thread requests what credits plus the send queue allow, so the
 * queue below is bounded by construction; an item beyond what was requested is a publisher bug and
 * fails the send (Reactive Streams &sect;2.13 style) rather than buffering.
 *
 * <p>{@code onNext} may run on any thread; everything else here is read on the progress thread.
 * Messages emitted from another thread go through a single-producer queue. Messages the publisher
 * emits synchronously inside {@link #request} (a {@code Flux.range}/{@code fromIterable} style source,
 * on the progress thread) go into a plain ring instead, as long as the queue is empty, which keeps them
 * in publisher order: everything in the ring is older than anything in the queue. That saves the
 * queue's ordered stores and the wake-up per message on the common path (32 B messages: about 8 of 52 ns
 * of the progress thread's time per message, both ends on one thread).
 */
final class SendOp implements CoreSubscriber<RdmaMessage> {
    final DefaultRdmaConnection connection;
    final MonoSink<Void> sink;
    private final OneToOneConcurrentArrayQueue<RdmaMessage> queue;
    /** Messages emitted on the progress thread inside {@link #request}: a ring, progress thread only. */
    private final RdmaMessage[] local;
    private final int localMask;
    private int localHead;
    private int localTail;
    /** The progress thread while it is inside {@link #request}, else null; only it can see itself here. */
    private @Nullable Thread requester;
    volatile @Nullable Subscription subscription;
    volatile boolean publisherDone;
    volatile @Nullable Throwable publisherError;
    volatile boolean cancelled;
    volatile boolean overflowed;
    boolean finished;
    /** Set when the peer closed its inbound side: the error the op ends with once its messages in flight completed. */
    @Nullable ConnectionClosedException refusal;
    long taken;
    long completed;
    int firstPsn = -1;

    SendOp(DefaultRdmaConnection connection, MonoSink<Void> sink, int queueCapacity) {
        this.connection = connection;
        this.sink = sink;
        this.queue = new OneToOneConcurrentArrayQueue<>(Math.max(2, queueCapacity));
        this.local = new RdmaMessage[queue.capacity()];
        this.localMask = local.length - 1;
    }

    @Override
    public Context currentContext() {
        return Context.of(sink.contextView());
    }

    @Override
    public void onSubscribe(Subscription s) {
        java.util.Objects.requireNonNull(s, "onSubscribe(null) violates Reactive Streams rule 2.13");
        if (Operators.validate(subscription, s)) {
            subscription = s;
            if (cancelled) {
                s.cancel();
            }
            connection.wakeUp();
        }
    }

    @Override
    public void onNext(RdmaMessage m) {
        java.util.Objects.requireNonNull(m, "onNext(null) violates Reactive Streams rule 2.13");
        if (cancelled || publisherDone) {
            Operators.onDiscard(m, currentContext());
            if (m.refCnt() > 0) {
                m.release();
            }
            return;
        }
        if (requester == Thread.currentThread() && queue.isEmpty()) {
            // on the progress thread, inside request(): it transmits after this duty cycle, no wake-up needed
            if (localTail - localHead < local.length) {
                local[localTail++ & localMask] = m;
                return;
            }
        } else if (queue.offer(m)) {
            connection.wakeUp();
            return;
        }
        // more than was requested: a publisher bug, the send fails (the connection sees overflowed)
        overflowed = true;
        m.release();
        Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
        connection.wakeUp();
    }

    @Override
    public void onError(Throwable t) {
        java.util.Objects.requireNonNull(t, "onError(null) violates Reactive Streams rule 2.13");
        if (publisherDone) {
            Operators.onErrorDropped(t, currentContext());
            return;
        }
        publisherError = t;
        publisherDone = true;
        connection.wakeUp();
    }

    @Override
    public void onComplete() {
        publisherDone = true;
        connection.wakeUp();
    }

    /** The user cancelled the send Mono. */
    void cancelFromUser() {
        cancelled = true;
        Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
        connection.wakeUp();
    }

    /** Requests {@code n} more from the publisher (progress thread). */
    void request(long n) {
        Subscription s = subscription;
        if (s != null && n > 0) {
            requester = Thread.currentThread();
            try {
                s.request(n);
            } finally {
                requester = null;
            }
        }
    }

    /** The oldest message taken and not yet sent, or null (progress thread). */
    @Nullable RdmaMessage peek() {
        return localHead != localTail ? local[localHead & localMask] : queue.peek();
    }

    /** Removes and returns the oldest message taken and not yet sent, or null (progress thread). */
    @Nullable RdmaMessage poll() {
        if (localHead != localTail) {
            int i = localHead++ & localMask;
            RdmaMessage m = local[i];
            local[i] = null;
            return m;
        }
        return queue.poll();
    }

    /** Whether every message taken from the publisher was handed to the connection (progress thread). */
    boolean isEmpty() {
        return localHead == localTail && queue.isEmpty();
    }

    /**
     * Releases the queued messages (progress thread, at the end of the op).
     *
     * @return how many there were: taken from the publisher and never sent
     */
    int drainQueue() {
        int n = 0;
        RdmaMessage m;
        while ((m = poll()) != null) {
            n++;
            if (m.refCnt() > 0) {
                m.release();
            }
        }
        return n;
    }
}
