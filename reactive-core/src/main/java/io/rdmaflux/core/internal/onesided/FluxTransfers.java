package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.onesided.Transfer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The streaming form of put and get ({@code OneSided.transfers}): takes transfers from its source one at
 * a time, issues each, and emits it when it completed. Backpressure: it asks the source for the next
 * transfer only while the bytes in flight are below {@code maxOutstandingBytes} (a transfer longer than
 * that goes alone) and the transfers in flight plus those completed and not yet emitted are below the
 * subscriber's outstanding demand, so neither bytes on the wire nor completed transfers pile up without
 * bound.
 *
 * <p><b>Errors:</b> the first transfer that fails (or the source's error) cancels the source and errors
 * the subscriber after the transfers in flight ended. <b>Cancel:</b> cancels the source; transfers in
 * flight run to completion (posted RDMA cannot be recalled) and are dropped.
 *
 * <p><b>Concurrency:</b> signals are serialized by a work-in-progress counter; completions come from the
 * progress thread, requests and source signals from any.
 */
final class FluxTransfers extends Flux<Transfer> {
    private final OneSidedEngine engine;
    private final Flux<Transfer> source;
    private final long maxOutstandingBytes;

    FluxTransfers(OneSidedEngine engine, Flux<Transfer> source, long maxOutstandingBytes) {
        this.engine = engine;
        this.source = source;
        this.maxOutstandingBytes = maxOutstandingBytes;
    }

    @Override
    public void subscribe(CoreSubscriber<? super Transfer> actual) {
        source.subscribe(new Main(actual, engine, maxOutstandingBytes));
    }

    static final class Main implements CoreSubscriber<Transfer>, Subscription {
        private final CoreSubscriber<? super Transfer> actual;
        private final OneSidedEngine engine;
        private final long maxOutstandingBytes;
        private final AtomicInteger wip = new AtomicInteger();
        // guarded by this
        private @Nullable Subscription upstream;
        private long demand;
        private int inFlight;
        private long bytesInFlight;
        private boolean requested;
        private boolean sourceDone;
        private boolean cancelled;
        private boolean terminated;
        private @Nullable Throwable error;
        private final ArrayDeque<Transfer> completed = new ArrayDeque<>();

        Main(CoreSubscriber<? super Transfer> actual, OneSidedEngine engine, long maxOutstandingBytes) {
            this.actual = actual;
            this.engine = engine;
            this.maxOutstandingBytes = maxOutstandingBytes;
        }

        @Override
        public reactor.util.context.Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(Subscription s) {
            synchronized (this) {
                upstream = s;
            }
            actual.onSubscribe(this);
            drain();
        }

        @Override
        public void onNext(Transfer t) {
            synchronized (this) {
                requested = false;
                inFlight++;
                bytesInFlight += t.lengthBytes();
            }
            engine.transfer(t).subscribe(null, e -> ended(t, e), () -> ended(t, null));
        }

        private void ended(Transfer t, @Nullable Throwable e) {
            synchronized (this) {
                inFlight--;
                bytesInFlight -= t.lengthBytes();
                if (e != null) {
                    if (error == null) {
                        error = e;
                    }
                } else if (!cancelled) {
                    completed.add(t);
                }
            }
            drain();
        }

        @Override
        public void onError(Throwable t) {
            synchronized (this) {
                sourceDone = true;
                if (error == null) {
                    error = t;
                }
            }
            drain();
        }

        @Override
        public void onComplete() {
            synchronized (this) {
                sourceDone = true;
            }
            drain();
        }

        @Override
        public void request(long n) {
            if (Operators.validate(n)) {
                synchronized (this) {
                    demand = Operators.addCap(demand, n);
                }
                drain();
            }
        }

        @Override
        public void cancel() {
            Subscription s;
            synchronized (this) {
                cancelled = true;
                completed.clear();
                s = upstream;
            }
            if (s != null) {
                s.cancel();
            }
        }

        private void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                while (true) {
                    Transfer next = null;
                    boolean complete = false;
                    Throwable failed = null;
                    Subscription cancelUpstream = null;
                    Subscription requestOne = null;
                    synchronized (this) {
                        if (cancelled || terminated) {
                            completed.clear();
                            break;
                        }
                        if (error != null) {
                            if (!sourceDone) {
                                sourceDone = true;
                                cancelUpstream = upstream;
                            }
                            if (inFlight == 0) {
                                terminated = true;
                                failed = error;
                                completed.clear();
                            }
                        } else if (demand > 0 && !completed.isEmpty()) {
                            next = completed.poll();
                            if (demand != Long.MAX_VALUE) {
                                demand--;
                            }
                        } else if (sourceDone && inFlight == 0 && completed.isEmpty()) {
                            terminated = true;
                            complete = true;
                        } else if (!sourceDone && !requested && upstream != null && inFlight + completed.size() < demand
                            && (inFlight == 0 || bytesInFlight < maxOutstandingBytes)) {
                            requested = true;
                            requestOne = upstream;
                        }
                    }
                    if (cancelUpstream != null) {
                        cancelUpstream.cancel();
                    }
                    if (failed != null) {
                        actual.onError(failed);
                        break;
                    }
                    if (complete) {
                        actual.onComplete();
                        break;
                    }
                    if (next != null) {
                        actual.onNext(next);
                        continue;
                    }
                    if (requestOne != null) {
                        requestOne.request(1);
                        continue;
                    }
                    if (cancelUpstream == null) {
                        break;
                    }
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }
}
