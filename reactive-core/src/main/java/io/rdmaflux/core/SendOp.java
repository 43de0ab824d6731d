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
 */
final class SendOp implements CoreSubscriber<RdmaMessage> {
    final DefaultRdmaConnection connection;
    final MonoSink<Void> sink;
    final OneToOneConcurrentArrayQueue<RdmaMessage> queue;
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
        if (!queue.offer(m)) {
            overflowed = true;
            m.release();
            Subscription s = subscription;
            if (s != null) {
                s.cancel();
            }
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

    void request(long n) {
        Subscription s = subscription;
        if (s != null && n > 0) {
            s.request(n);
        }
    }

    /**
     * Releases the queued messages (progress thread, at the end of the op).
     *
     * @return how many there were: taken from the publisher and never sent
     */
    int drainQueue() {
        int n = 0;
        RdmaMessage m;
        while ((m = queue.poll()) != null) {
            n++;
            if (m.refCnt() > 0) {
                m.release();
            }
        }
        return n;
    }
}
