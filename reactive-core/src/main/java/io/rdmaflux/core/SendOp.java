package io.rdmaflux.core;

import org.agrona.concurrent.OneToOneConcurrentArrayQueue;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.Fuseable;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

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
 *
 * <p><b>Synchronous fusion.</b> A publisher that offers Reactor's {@link Fuseable#SYNC} mode
 * ({@code Flux.range}, {@code fromIterable}, {@code fromArray}, {@code just}, and {@code map},
 * {@code filter}, {@code doOnNext} over them) is not requested from: where the progress thread would
 * request {@code n}, it polls up to {@code n} messages with {@link Fuseable.QueueSubscription#poll()}
 * straight into the ring (so the bounds above hold unchanged), and a {@code null} poll is the
 * publisher's completion. Such a source emits only inside {@code request}, which the progress thread
 * calls, so the user's operators run on the same thread either way; fusion only removes the
 * {@code onNext} chain and its checks per message (the same fusion Reactor's own {@code publishOn} and
 * {@code flatMap} do). Asynchronous fusion is not asked for: such sources keep the queue.
 */
final class SendOp implements CoreSubscriber<RdmaMessage>, Scannable {
    private static final VarHandle WIP;

    static {
        try {
            WIP = MethodHandles.lookup().findVarHandle(SendOp.class, "wip", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

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
    /**
     * The publisher's subscription when it agreed to {@link Fuseable#SYNC} fusion, else null; written in
     * {@link #onSubscribe} before {@link #subscription} is published, polled on the progress thread only.
     */
    private Fuseable.@Nullable QueueSubscription<? extends RdmaMessage> fused;
    volatile @Nullable Subscription subscription;
    volatile boolean publisherDone;
    volatile @Nullable Throwable publisherError;
    volatile boolean cancelled;
    volatile boolean overflowed;
    /** Set once the op ended and its queue was drained: the progress thread no longer polls it outside {@link #reclaim}. */
    private volatile boolean drained;
    /** {@link #drained} as the progress thread set it: a plain read on the per-message path. */
    private boolean drainedHere;
    private volatile int wip;
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

    /**
     * Reactor's introspection, as its operators answer it: the publisher's subscription (PARENT), the
     * messages queued and not yet transmitted (BUFFERED), the queue's capacity (PREFETCH), whether the
     * publisher ended (TERMINATED) and with what error (ERROR), and whether the send was cancelled
     * (CANCELLED). Any thread; the counts may lag the progress thread.
     */
    @Override
    public @Nullable Object scanUnsafe(Attr key) {
        if (key == Attr.PARENT) {
            return subscription;
        }
        if (key == Attr.BUFFERED) {
            return queue.size() + Math.max(0, localTail - localHead);
        }
        if (key == Attr.PREFETCH) {
            return queue.capacity();
        }
        if (key == Attr.TERMINATED) {
            return publisherDone;
        }
        if (key == Attr.ERROR) {
            return publisherError;
        }
        if (key == Attr.CANCELLED) {
            return cancelled;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        if (key == Attr.NAME) {
            return "send(" + connection.name() + ")";
        }
        return null;
    }

    @Override
    public void onSubscribe(Subscription s) {
        java.util.Objects.requireNonNull(s, "onSubscribe(null) violates Reactive Streams rule 2.13");
        if (Operators.validate(subscription, s)) {
            if (s instanceof Fuseable.QueueSubscription<?> qs) {
                @SuppressWarnings("unchecked")
                Fuseable.QueueSubscription<? extends RdmaMessage> q = (Fuseable.QueueSubscription<? extends RdmaMessage>) qs;
                // no THREAD_BARRIER: a SYNC source would run the user's operators inside request(), on the
                // progress thread, which is where poll() runs them too
                if (q.requestFusion(Fuseable.SYNC) == Fuseable.SYNC) {
                    fused = q;
                }
            }
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
            discard(m);
            return;
        }
        if (requester == Thread.currentThread() && queue.isEmpty()) {
            // on the progress thread, inside request(): it transmits after this duty cycle, no wake-up needed
            if (localTail - localHead < local.length) {
                local[localTail++ & localMask] = m;
                return;
            }
        } else if (queue.offer(m)) {
            if (!connection.onProgressThread()) {
                // Dekker with drainQueue(): either its last drain sees m, or this sees drained and reclaims m.
                // On the progress thread (a subscriber answering in onNext) drainQueue() runs on this same
                // thread: nothing to fence against, and the wake-up below costs no fence there either
                VarHandle.fullFence();
            }
            if (drained) {
                reclaim();
                return;
            }
            connection.wakeUp();
            return;
        }
        // more than was requested: a publisher bug, the send fails (the connection sees overflowed)
        overflowed = true;
        discard(m);
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

    /** Requests {@code n} more from the publisher (progress thread); fused, polls them. */
    void request(long n) {
        Fuseable.QueueSubscription<? extends RdmaMessage> q = fused;
        if (q != null) {
            if (n > 0 && !publisherDone && !cancelled) {
                pull(q, n);
            }
            return;
        }
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

    /**
     * Fused: pulls up to {@code n} messages into the ring, as a {@code request(n)} to a synchronous
     * source would have emitted them; a {@code null} poll is the completion, a throwing poll the error.
     */
    private void pull(Fuseable.QueueSubscription<? extends RdmaMessage> q, long n) {
        RdmaMessage[] ring = local;
        int mask = localMask;
        int tail = localTail;
        try {
            for (long k = 0; k < n; k++) {
                RdmaMessage m = q.poll();
                if (m == null) {
                    publisherDone = true;
                    break;
                }
                if (tail - localHead == ring.length) {
                    // cannot happen while the connection requests within credits plus queue: fails like rule 1.1
                    overflowed = true;
                    discard(m);
                    q.cancel();
                    break;
                }
                ring[tail++ & mask] = m;
                if (k == n - 1 && q.isEmpty()) {
                    // the last message asked for was the source's last (Reactor's SYNC consumers read an empty
                    // queue so): the one more poll returns null and runs the source's completion hooks
                    // (doOnComplete, a Stream's close, using's cleanup), which only that null runs
                    RdmaMessage extra = q.poll();
                    if (extra == null) {
                        publisherDone = true;
                    } else if (tail - localHead < ring.length) {
                        ring[tail++ & mask] = extra;
                    } else {
                        overflowed = true;
                        discard(extra);
                        q.cancel();
                    }
                }
            }
        } catch (Throwable t) {
            if (t instanceof NullPointerException && t.getMessage() == null) {
                // a fused map's poll() throws a bare NPE for a null from the user's mapper
                NullPointerException named = new NullPointerException("the publisher given to send() produced a null message"
                    + " (Reactive Streams rule 2.13): a map or other operator returned null; return an RdmaMessage, or filter the item out");
                named.initCause(t);
                t = named;
            }
            publisherError = Operators.onOperatorError(q, t, currentContext());
            publisherDone = true;
        }
        localTail = tail;
    }

    /** The oldest message taken and not yet sent, or null (progress thread). */
    @Nullable RdmaMessage peek() {
        if (drainedHere) {
            return null;
        }
        return localHead != localTail ? local[localHead & localMask] : queue.peek();
    }

    /** Removes and returns the oldest message taken and not yet sent, or null (progress thread). */
    @Nullable RdmaMessage poll() {
        if (drainedHere) {
            return null;
        }
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
        return drainedHere || localHead == localTail && queue.isEmpty();
    }

    /** {@link #discard(RdmaMessage, Context)} with this send's subscriber context (progress thread, or the emitting one). */
    void discard(RdmaMessage m) {
        discard(m, currentContext());
    }

    /**
     * A message taken from a send's publisher that will not be sent: offered to the discard hook of
     * {@code context} ({@code doOnDiscard}, as Reactor's operators do), then released unless the hook
     * released the send's reference. The hook counts as having released it when the reference count
     * dropped, so a reference the caller kept ({@code retain()}) is never released here, and a hook
     * that retains the message to keep it still has the send's reference released.
     */
    static void discard(RdmaMessage m, Context context) {
        int before = m.refCnt();
        Operators.onDiscard(m, context);
        if (before > 0 && m.refCnt() >= before) {
            // the hook did not release the send's reference (it may have retained one of its own)
            m.release();
        }
    }

    /**
     * Releases the queued messages (progress thread, at the end of the op).
     *
     * @return how many there were: taken from the publisher and never sent
     */
    int drainQueue() {
        if (drained) {
            return reclaim();
        }
        int n = 0;
        RdmaMessage m;
        Context context = null;
        while ((m = poll()) != null) {
            n++;
            if (context == null) {
                context = currentContext();
            }
            discard(m, context);
        }
        Fuseable.QueueSubscription<? extends RdmaMessage> q = fused;
        if (q != null && !publisherDone) {
            // the source discards what was never pulled (its clear() honours the discard hook, even for an endless source)
            publisherDone = true;
            q.cancel();
            q.clear();
        }
        // from now on the queue is drained only under WIP, by this thread or by a late onNext
        drainedHere = true;
        drained = true;
        return n + reclaim();
    }

    /**
     * Releases what is in the queue after {@link #drainQueue()}: a message a racing {@code onNext} put
     * there after the op ended (it passed the checks before the cancel). Whichever thread gets WIP from
     * 0 drains, until no other asked meanwhile, so the queue keeps one consumer at a time.
     *
     * @return messages released by this call
     */
    private int reclaim() {
        if ((int) WIP.getAndAdd(this, 1) != 0) {
            return 0;
        }
        int n = 0;
        int missed = 1;
        Context context = null;
        for (;;) {
            RdmaMessage m;
            while ((m = queue.poll()) != null) {
                n++;
                if (context == null) {
                    context = currentContext();
                }
                discard(m, context);
            }
            missed = (int) WIP.getAndAdd(this, -missed) - missed;
            if (missed == 0) {
                return n;
            }
        }
    }
}
