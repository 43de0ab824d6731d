package io.rdmaflux.core.reorder;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.function.ToIntFunction;

/** The operator behind {@link Reorder#byPsn}; see there. */
final class FluxReorderByPsn<T> extends FluxOperator<T, T> {
    private final ToIntFunction<? super T> psnOf;
    private final int firstPsn;
    private final int windowSize;

    FluxReorderByPsn(Flux<? extends T> source, ToIntFunction<? super T> psnOf, int firstPsn, int windowSize) {
        super(source);
        this.psnOf = psnOf;
        this.firstPsn = firstPsn;
        this.windowSize = windowSize;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        source.subscribe(new ReorderSubscriber<>(actual, psnOf, firstPsn, windowSize));
    }

    @Override
    public @Nullable Object scanUnsafe(Attr key) {
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.SYNC;
        }
        return super.scanUnsafe(key);
    }

    static final class ReorderSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable {
        @SuppressWarnings("rawtypes")
        static final AtomicIntegerFieldUpdater<ReorderSubscriber> WIP =
            AtomicIntegerFieldUpdater.newUpdater(ReorderSubscriber.class, "wip");
        @SuppressWarnings("rawtypes")
        static final AtomicLongFieldUpdater<ReorderSubscriber> REQUESTED =
            AtomicLongFieldUpdater.newUpdater(ReorderSubscriber.class, "requested");

        final CoreSubscriber<? super T> actual;
        final ToIntFunction<? super T> psnOf;
        final ReorderWindow<T> window;
        final Queue<T> arrivals = Queues.<T>unbounded(32).get();
        final ArrayDeque<T> ready = new ArrayDeque<>();
        @Nullable Subscription upstream;
        volatile int wip;
        volatile long requested;
        volatile boolean done;
        volatile boolean cancelled;
        @Nullable Throwable error;
        long upstreamOutstanding;
        boolean terminated;

        ReorderSubscriber(CoreSubscriber<? super T> actual, ToIntFunction<? super T> psnOf, int firstPsn, int windowSize) {
            this.actual = actual;
            this.psnOf = psnOf;
            this.window = new ReorderWindow<>(firstPsn, windowSize);
        }

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (Operators.validate(upstream, s)) {
                upstream = s;
                actual.onSubscribe(this);
            }
        }

        @Override
        public void onNext(T t) {
            if (done) {
                Operators.onNextDropped(t, currentContext());
                return;
            }
            arrivals.offer(t);
            drain();
        }

        @Override
        public void onError(Throwable t) {
            if (done) {
                Operators.onErrorDropped(t, currentContext());
                return;
            }
            error = t;
            done = true;
            drain();
        }

        @Override
        public void onComplete() {
            if (done) {
                return;
            }
            done = true;
            drain();
        }

        @Override
        public void request(long n) {
            if (Operators.validate(n)) {
                Operators.addCap(REQUESTED, this, n);
                drain();
            }
        }

        @Override
        public void cancel() {
            if (!cancelled) {
                cancelled = true;
                Subscription s = upstream;
                if (s != null) {
                    s.cancel();
                }
                drain();
            }
        }

        void drain() {
            if (WIP.getAndIncrement(this) != 0) {
                return;
            }
            int missed = 1;
            for (;;) {
                if (terminated) {
                    discardAll();
                } else if (cancelled) {
                    terminated = true;
                    discardAll();
                } else {
                    drainLoop();
                }
                missed = WIP.addAndGet(this, -missed);
                if (missed == 0) {
                    return;
                }
            }
        }

        private void drainLoop() {
            T t;
            while ((t = arrivals.poll()) != null) {
                upstreamOutstanding--;
                try {
                    window.offer(psnOf.applyAsInt(t), t, ready::add);
                } catch (ReorderWindowOverflowException e) {
                    Operators.onDiscard(t, currentContext());
                    fail(e);
                    return;
                }
            }
            long r = requested;
            long e = 0;
            while (e != r && !ready.isEmpty()) {
                if (cancelled) {
                    return;
                }
                actual.onNext(ready.poll());
                e++;
            }
            if (e != 0 && r != Long.MAX_VALUE) {
                r = REQUESTED.addAndGet(this, -e);
            }
            if (done && arrivals.isEmpty()) {
                if (error != null) {
                    fail(error);
                    return;
                }
                if (ready.isEmpty()) {
                    terminated = true;
                    if (window.queued() > 0) {
                        window.clear(x -> Operators.onDiscard(x, currentContext()));
                        actual.onError(new ReorderWindowOverflowException("source completed with " + window.queued()
                            + " items still waiting for PSN " + window.esn() + " (the ESN)"));
                    } else {
                        actual.onComplete();
                    }
                }
                return;
            }
            long need = Math.max(Math.min(r, Integer.MAX_VALUE) - ready.size(), window.span());
            long toRequest = need - window.queued() - upstreamOutstanding;
            if (toRequest > 0 && upstream != null) {
                upstreamOutstanding += toRequest;
                upstream.request(toRequest);
            }
        }

        private void fail(Throwable e) {
            terminated = true;
            Subscription s = upstream;
            if (s != null && !done) {
                s.cancel();
            }
            discardAll();
            actual.onError(e);
        }

        private void discardAll() {
            Context ctx = currentContext();
            window.clear(x -> Operators.onDiscard(x, ctx));
            T t;
            while ((t = ready.poll()) != null) {
                Operators.onDiscard(t, ctx);
            }
            while ((t = arrivals.poll()) != null) {
                Operators.onDiscard(t, ctx);
            }
        }

        @Override
        public @Nullable Object scanUnsafe(Attr key) {
            if (key == Attr.PARENT) {
                return upstream;
            }
            if (key == Attr.ACTUAL) {
                return actual;
            }
            if (key == Attr.BUFFERED) {
                return window.queued() + ready.size();
            }
            if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
                return requested;
            }
            if (key == Attr.CANCELLED) {
                return cancelled;
            }
            if (key == Attr.TERMINATED) {
                return terminated;
            }
            if (key == Attr.RUN_STYLE) {
                return Attr.RunStyle.SYNC;
            }
            return null;
        }
    }
}
